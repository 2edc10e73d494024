// Wrapper module: the history checker of the e2e traffic (main.go), linearizability by porcupine
// with an etcd KV model, and on a violation porcupine's HTML visualization (docs/reliability.md).
module etcd-operator.dev/localcluster/history-checker

go 1.24.0

require github.com/anishathalye/porcupine v1.3.1
