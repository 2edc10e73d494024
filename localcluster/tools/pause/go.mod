// Wrapper module: the Pod sandbox's pause process of the real nodes (image registry.k8s.io/pause),
// built from main.go here (see docs/development.md, "Real nodes (in progress)").
module etcd-operator.dev/localcluster/pause

go 1.24.0
