#!/usr/bin/env bash
# Builds (once) and prints the path of a pinned local-cluster binary.
#
#   localcluster/tools/build.sh TOOL [version]
#   localcluster/tools/build.sh all     every binary the tests use (etcd of every wrapper module;
#                                       as root, the real nodes' parts too), TOOLS_JOBS builds at
#                                       once (default: the cores + 1)
#   localcluster/tools/build.sh prometheus|promtool   Prometheus and promtool of the wrapper module prometheus/
#                                       (the alert rules' tests and the metrics e2e; both built together)
#   localcluster/tools/build.sh history-checker   the e2e traffic's linearizability and watch checker
#                                       (wrapper module history-checker/, porcupine; docs/reliability.md)
#
# TOOL: the control plane's kube-apiserver|kube-controller-manager|kube-scheduler|kubectl (a second
# argument picks another release, from the wrapper module k8s-1.<minor>/; these four and the
# kubelet are one binary, `kubernetes`, with a symlink to it by each name); the real nodes'
# kubelet|containerd|containerd-shim-runc-v2|ctr|runc|bridge|host-local|loopback|portmap|crictl|
# pause|coredns|local-path-provisioner; etcd|etcdctl|etcdutl [etcd-version]; helm|versitygw|cert-manager|crane|registry|krew;
# versitygw-entrypoint (the path of upstream's docker-entrypoint.sh for the versitygw image).
#
# cert-manager is the controller of the wrapper module cert-manager/ (its main.go), with the
# CRDs of the same version copied beside it, in crds/.
#
# Binaries are cached per version under $ETCD_OPERATOR_CACHE (default ~/.cache/etcd-operator),
# outside the repo, so a second run (and CI on the same machine) reuses them. Set
# LOCALCLUSTER_BINARIES=path to take kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, etcd and helm from PATH (or from $KUBEBUILDER_ASSETS when set) instead of building them;
# cert-manager is built all the same (no released binary takes our main.go's flags).
set -euo pipefail

# The control plane's release and the kubelet's (wrapper module k8s/): a kubelet may not be newer
# than its API server, so both move together.
K8S_VERSION=v1.37.2
# Helm, versitygw (the S3-compatible server the snapshot tests store to), the registry
# (distribution's, run locally by test/release/ to push the image and the chart to), containerd,
# crictl and local-path-provisioner: each the release its wrapper module (helm/, versitygw/,
# registry/, containerd/, crictl/, local-path-provisioner/) requires. Those wrappers, k8s/,
# prometheus/, cert-manager/ and coredns/ require the dependencies they share at one version
# (docs/development.md, "One version of the shared dependencies"): the Go build cache then compiles
# each shared package once for all of them.
# The release path: crane pushes and pulls OCI images.
CRANE_VERSION=v0.22.1
# kubectl's plugin manager, to install `kubectl etcd` from its built archive as a user would
# (make plugin-archive, test/e2e/kubectl-etcd.test.ts). v0.4.3 is the newest the Go module proxy serves.
KREW_VERSION=v0.4.3
DEFAULT_ETCD=3.6.16
# The real nodes' runc and CNI plugins, each `go install`ed at a pinned version into a dir of its own.
RUNC_VERSION=v1.5.2
CNI_PLUGINS_VERSION=v1.10.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${ETCD_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etcd-operator}
tool=${1:?usage: build.sh TOOL [etcd-version]}

log() { echo "build.sh: $*" >&2; }

if [[ $tool == all ]]; then
  # Groups of tools, each group's in order (they share a cache dir, or one build makes them all);
  # the groups at once, TOOLS_JOBS at a time (default: the cores + 1), so one's links and module
  # downloads overlap another's compiles. `--` waits for the groups before it: Kubernetes first,
  # beside the tools that share little with it (the etcd wrappers keep etcd's own dependencies),
  # then the tools whose wrappers share its packages (client-go, gRPC, OpenTelemetry...), which
  # find them compiled. Two builds of the same package at once would both compile it.
  # The nodes run only as root (namespaces, mounts, cgroups); without root the cluster is the
  # control plane alone, and runc's build would need Debian packages only root installs.
  root=; [[ $(id -u) == 0 ]] || log "not root: the real nodes' parts are not built (the nodes need root)"
  [[ $(id -u) == 0 ]] && root=1
  groups=("kube-apiserver kube-controller-manager kube-scheduler kubectl${root:+ kubelet}" versitygw)
  for mod in "$here"/etcd-*/go.mod; do
    v=$(sed -n 's#^\tgo.etcd.io/etcd/server/v3 v\([0-9.]*\).*#\1#p' "$mod")
    groups+=("etcd@$v etcdctl@$v etcdutl@$v")
  done
  groups+=(krew crane history-checker)
  [[ -z $root ]] || groups+=(runc "bridge host-local loopback portmap" pause)
  groups+=(-- prometheus cert-manager registry helm)
  [[ -z $root ]] || groups+=(local-path-provisioner "containerd containerd-shim-runc-v2 ctr" crictl coredns)
  max=${TOOLS_JOBS:-$(( $(nproc 2>/dev/null || echo 1) + 1 ))}
  status=$(mktemp -d)
  trap 'rm -rf "$status"' EXIT
  # Runs one group (in a job of its own), and says what it cost when it built anything: wall
  # seconds, and the CPU seconds (user+sys) of its processes, from `times`.
  build_group() { # index, group
    local t start=$EPOCHREALTIME
    for t in $2; do
      if [[ $t == *@* ]]; then "$0" "${t%@*}" "${t#*@}"; else "$0" "$t"; fi \
        || { log "failed: $2"; touch "$status/failed"; return; }
    done
    times >"$status/$1.times"
    local wall=$(( (${EPOCHREALTIME/./} - ${start/./}) / 1000000 ))
    (( wall < 1 )) || log "$2: $wall s, $(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/);
      printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$status/$1.times") s CPU (user+sys)"
  }
  i=0 running=0
  for g in "${groups[@]}"; do
    if [[ $g == -- ]]; then wait; running=0; continue; fi
    if (( running >= max )); then wait -n || true; running=$((running - 1)); fi
    build_group $((i++)) "$g" &
    running=$((running + 1))
  done
  wait
  [[ ! -e $status/failed ]]
  exit
fi

if [[ "${LOCALCLUSTER_BINARIES:-}" == path && $tool != cert-manager ]]; then
  if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/$tool" ]]; then
    echo "$KUBEBUILDER_ASSETS/$tool"; exit 0
  fi
  command -v "$tool" >/dev/null || { log "LOCALCLUSTER_BINARIES=path but $tool is not on PATH"; exit 1; }
  command -v "$tool"; exit 0
fi

# Every binary is linked without its symbol table and DWARF (-s -w), so its packages are compiled
# without DWARF too: 6-14% less CPU and a quarter less build cache (docs/development.md).
nodwarf=-gcflags=all=-dwarf=false

# Go is needed only to build a binary that is not cached yet.
need_go() { command -v go >/dev/null || { log "Go is needed to build $tool (https://go.dev/doc/install)"; exit 1; }; }

# Builds into a temporary directory and renames, so an interrupted build never leaves a
# half-written binary that a later run would trust.
build_into() { # dir, binary name, then the go build arguments
  need_go
  local dir=$1 name=$2; shift 2
  mkdir -p "$dir"
  local tmp; tmp=$(mktemp -d "$dir/.build.XXXXXX")
  (CGO_ENABLED=0 go build -trimpath "$nodwarf" -o "$tmp/$name" "$@") || { rm -rf "$tmp"; exit 1; }
  mv -f "$tmp/$name" "$dir/$name"
  rmdir "$tmp"
}

# `go install` of a released command (one with no replace lines) into its versioned dir.
go_installed() { # name, version, package path
  local dir=$cache/$1-$2
  if [[ ! -x $dir/$1 ]]; then
    log "installing $1 $2 from Go modules (first time only)"
    need_go
    mkdir -p "$dir"
    GOBIN=$dir CGO_ENABLED=0 go install -trimpath "$nodwarf" -ldflags "-s -w" "$3@$2"
  fi
  echo "$dir/$1"
}

# The version a wrapper module requires a module at.
pinned() { # wrapper dir, module path
  sed -n "s#^\(require \|\t\)$2 \(v[^ ]*\).*#\2#p" "$here/$1/go.mod"
}

# The digest of a wrapper module (its go.mod, and main.go when it has one): cache dirs are named by
# it beside the release, so a binary built with other versions of the dependencies is not taken
# for this one, and a change of the pins builds again.
modsum() { # wrapper dir
  cat "$here/$1/go.mod" $([[ -f $here/$1/main.go ]] && echo "$here/$1/main.go") | sha256sum | cut -c1-12
}

# `go build` of one command of a wrapper module into a cache dir named by the release and the
# module's digest (cache dir prefix, binary name, wrapper dir, module path, package path, then
# go build flags).
wrapped() {
  local prefix=$1 name=$2 mod=$3 version; version=$(pinned "$3" "$4")
  local dir=$cache/$prefix-$version-$(modsum "$mod") pkg=$5; shift 5
  [[ -n $version ]] || { log "$mod/go.mod requires no $4"; exit 1; }
  if [[ ! -x $dir/$name ]]; then
    log "building $name $version from Go modules (first time only)"
    (cd "$here/$mod" && build_into "$dir" "$name" "$@" "$pkg")
  fi
  echo "$dir/$name"
}

# `go install` of one command of a released module into a shared versioned dir (dir name, binary
# name, module@version, package path, then go install flags), through a temporary GOBIN and a
# rename like build_into. CGO_ENABLED may be set by the caller (runc).
go_installed_into() {
  local dir=$cache/$1 name=$2 modver=$3 pkg=$4; shift 4
  if [[ ! -x $dir/$name ]]; then
    log "installing $name ${modver#*@} from Go modules (first time only)"
    need_go
    mkdir -p "$dir"
    local tmp; tmp=$(mktemp -d "$dir/.build.XXXXXX")
    (GOBIN=$tmp CGO_ENABLED=${CGO_ENABLED:-0} go install -trimpath "$nodwarf" "$@" "$pkg@${modver#*@}") || { rm -rf "$tmp"; exit 1; }
    mv -f "$tmp/$(basename "$pkg")" "$dir/$name"
    rmdir "$tmp"
  fi
  echo "$dir/$name"
}

case "$tool" in
  kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet)
    # K8S_VERSION from k8s/; another release (`TOOL v1.N.x`) from a wrapper module k8s-1.N/.
    version=${2:-$K8S_VERSION}
    minor=${version#v1.}; minor=${minor%%.*}
    mod=$here/k8s; [[ $version == "$K8S_VERSION" ]] || mod=$here/k8s-1.$minor
    pinned=$(sed -n 's#^\(require \|\t\)k8s.io/kubernetes \(v[0-9.]*\).*#\2#p' "$mod/go.mod" 2>/dev/null || true)
    [[ "$pinned" == "$version" ]] || { log "no wrapper module pins Kubernetes $version (${mod#"$here"/}/go.mod: '$pinned')"; exit 1; }
    dir=$cache/kubernetes-$version-$(modsum "${mod#"$here"/}")
    if [[ ! -x $dir/$tool ]]; then
      # One binary, `kubernetes` (the module's main.go), and the five commands as symlinks to it:
      # it runs the one it is started as.
      if [[ ! -x $dir/kubernetes ]]; then
        log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kubelet $version (one binary) from Go modules (first time only; several minutes)"
        ldflags="-s -w"
        for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
          ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
          ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
        done
        (cd "$mod" && build_into "$dir" kubernetes -ldflags "$ldflags" .)
      fi
      ln -sfn kubernetes "$dir/$tool"
    fi
    echo "$dir/$tool" ;;
  containerd|containerd-shim-runc-v2|ctr)
    m=github.com/containerd/containerd/v2
    wrapped containerd "$tool" containerd $m "$m/cmd/$tool" \
      -ldflags "-s -w -X $m/version.Version=$(pinned containerd $m) -X $m/version.Package=$m" ;;
  runc)
    # cgo for libseccomp (Debian libseccomp-dev, hack/node-deps.sh); without upstream's default
    # libpathrs tag, a Rust library: runc then uses its Go path-resolution code.
    command -v pkg-config >/dev/null && pkg-config --exists libseccomp \
      || { log "runc needs libseccomp's headers: run hack/node-deps.sh (Debian libseccomp-dev)"; exit 1; }
    CGO_ENABLED=1 go_installed_into "runc-$RUNC_VERSION" runc "github.com/opencontainers/runc@$RUNC_VERSION" \
      github.com/opencontainers/runc -tags "seccomp urfave_cli_no_docs" \
      -ldflags "-s -w" ;;
  bridge|loopback|host-local|portmap)
    case $tool in bridge|loopback) sub=main ;; host-local) sub=ipam ;; portmap) sub=meta ;; esac
    p=github.com/containernetworking/plugins
    go_installed_into "cni-plugins-$CNI_PLUGINS_VERSION" "$tool" "$p@$CNI_PLUGINS_VERSION" "$p/plugins/$sub/$tool" \
      -ldflags "-s -w -X $p/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" ;;
  crictl)
    m=sigs.k8s.io/cri-tools
    wrapped cri-tools crictl crictl $m $m/cmd/crictl -ldflags "-s -w -X $m/pkg/version.Version=$(pinned crictl $m)" ;;
  local-path-provisioner)
    p=github.com/rancher/local-path-provisioner
    wrapped local-path-provisioner local-path-provisioner local-path-provisioner $p $p \
      -ldflags "-s -w -X main.VERSION=$(pinned local-path-provisioner $p)" ;;
  pause)
    # Our own pause (pause/main.go): the Pod sandbox's process, for the image registry.k8s.io/pause.
    # Versioned by the source's digest, so a change to it builds again.
    sum=$(cat "$here/pause/go.mod" "$here/pause/main.go" | sha256sum | cut -c1-12)
    dir=$cache/pause-$sum
    [[ -x $dir/pause ]] || { log "building pause (first time only)"; (cd "$here/pause" && build_into "$dir" pause -ldflags "-s -w" .); }
    echo "$dir/pause" ;;
  etcd|etcdctl|etcdutl)
    version=${2:-$DEFAULT_ETCD}
    series=${version%.*}
    [[ -d $here/etcd-$series ]] || { log "no wrapper module for etcd $series (have: $(cd "$here" && ls -d etcd-* | tr '\n' ' '))"; exit 1; }
    dir=$cache/etcd-v$version
    if [[ ! -x $dir/$tool ]]; then
      log "building $tool v$version from Go modules (first time only)"
      pinned=$(sed -n 's#^\tgo.etcd.io/etcd/server/v3 v\([0-9.]*\).*#\1#p' "$here/etcd-$series/go.mod")
      [[ "$pinned" == "$version" ]] || { log "etcd-$series/go.mod pins $pinned, not $version"; exit 1; }
      ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=v$version"
      pkg=go.etcd.io/etcd/server/v3; [[ $tool != etcd ]] && pkg=go.etcd.io/etcd/$tool/v3
      (cd "$here/etcd-$series" && build_into "$dir" "$tool" -ldflags "$ldflags" "$pkg")
    fi
    echo "$dir/$tool" ;;
  cert-manager)
    mod=$here/cert-manager
    version=$(sed -n 's#^\tgithub.com/cert-manager/cert-manager \(v[0-9.]*\)$#\1#p' "$mod/go.mod")
    dir=$cache/cert-manager-$version-$(modsum cert-manager)
    if [[ ! -x $dir/cert-manager ]]; then
      log "building cert-manager $version from Go modules (first time only)"
      need_go
      # The CRDs first (the binary marks the dir complete), copied out of the module cache,
      # which `go clean -modcache` may empty.
      src=$(cd "$mod" && go mod download -json github.com/cert-manager/cert-manager | sed -n 's#^\t"Dir": "\(.*\)",$#\1#p')
      [[ -d $src/deploy/crds ]] || { log "no deploy/crds in cert-manager $version ($src)"; exit 1; }
      mkdir -p "$dir"
      tmp=$(mktemp -d "$dir/.crds.XXXXXX")
      chmod 755 "$tmp"
      cp "$src"/deploy/crds/*.yaml "$tmp/"
      chmod u+w "$tmp"/*.yaml
      rm -rf "$dir/crds"
      mv "$tmp" "$dir/crds"
      (cd "$mod" && build_into "$dir" cert-manager \
        -ldflags "-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$version" .)
    fi
    echo "$dir/cert-manager" ;;
  coredns)
    # The real nodes' cluster DNS: CoreDNS of the wrapper module coredns/ (its main.go: five plugins),
    # versioned by CoreDNS's release and the digest of main.go, so a change of plugins builds again.
    version=$(sed -n 's#^require github.com/coredns/coredns \(v[0-9.]*\)$#\1#p' "$here/coredns/go.mod")
    sum=$(cat "$here/coredns/go.mod" "$here/coredns/main.go" | sha256sum | cut -c1-12)
    dir=$cache/coredns-$version-$sum
    [[ -x $dir/coredns ]] || { log "building coredns $version from Go modules (first time only)"; (cd "$here/coredns" && build_into "$dir" coredns -ldflags "-s -w" .); }
    echo "$dir/coredns" ;;
  prometheus|promtool)
    # Prometheus and promtool of the wrapper module prometheus/ (the module's v0.3xx.y is release
    # 3.xx.y), without service discovery but file and static targets (-tags remove_all_sd): the
    # e2e scrapes the manager at a known address, and the rules' tests need promtool alone.
    v=$(sed -n 's#^\tgithub.com/prometheus/prometheus v0\.\([0-9]*\)\.\([0-9]*\)\( // indirect\)\{0,1\}$#\1.\2#p' "$here/prometheus/go.mod")
    [[ -n $v ]] || { log "prometheus/go.mod pins no github.com/prometheus/prometheus v0.x.y"; exit 1; }
    version=v$(( ${v%%.*} / 100 )).$(( ${v%%.*} % 100 )).${v#*.}
    dir=$cache/prometheus-$version-$(modsum prometheus)
    for t in prometheus promtool; do
      [[ -x $dir/$t ]] && continue
      log "building $t $version from Go modules (first time only; several minutes)"
      p=github.com/prometheus/common/version
      (cd "$here/prometheus" && build_into "$dir" "$t" -tags remove_all_sd \
        -ldflags "-s -w -X $p.Version=${version#v} -X $p.Branch=HEAD -X $p.Revision=v0.$v" \
        "github.com/prometheus/prometheus/cmd/$t")
    done
    echo "$dir/$tool" ;;
  history-checker)
    # Our own checker (history-checker/*.go) with porcupine: versioned by the digest of its
    # module and sources, so a change to the model builds again.
    sum=$(cat "$here/history-checker/go.mod" "$here/history-checker/go.sum" "$here"/history-checker/*.go | sha256sum | cut -c1-12)
    dir=$cache/history-checker-$sum
    [[ -x $dir/history-checker ]] || { log "building history-checker (first time only)"; (cd "$here/history-checker" && build_into "$dir" history-checker -ldflags "-s -w" .); }
    echo "$dir/history-checker" ;;
  helm) wrapped helm helm helm helm.sh/helm/v3 helm.sh/helm/v3/cmd/helm -ldflags "-s -w" ;;
  versitygw) wrapped versitygw versitygw versitygw github.com/versity/versitygw github.com/versity/versitygw/cmd/versitygw -ldflags "-s -w" ;;
  versitygw-entrypoint)
    # The upstream image's entrypoint script, from the same release's module: the real nodes'
    # versity/versitygw image (localcluster/realnode/images.ts) carries it as upstream's does.
    need_go
    version=$(pinned versitygw github.com/versity/versitygw)
    dir=$(cd "$here/versitygw" && go mod download -json "github.com/versity/versitygw@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    [[ -f $dir/docker-entrypoint.sh ]] || { log "no docker-entrypoint.sh in versitygw $version's module"; exit 1; }
    echo "$dir/docker-entrypoint.sh" ;;
  crane) go_installed crane "$CRANE_VERSION" github.com/google/go-containerregistry/cmd/crane ;;
  krew)
    # Named kubectl-krew, as krew installs itself, so `kubectl krew` finds it on PATH.
    go_installed_into "krew-$KREW_VERSION" kubectl-krew "sigs.k8s.io/krew@$KREW_VERSION" sigs.k8s.io/krew/cmd/krew \
      -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION" ;;
  registry) wrapped registry registry registry github.com/distribution/distribution/v3 github.com/distribution/distribution/v3/cmd/registry -ldflags "-s -w" ;;
  *) log "unknown tool '$tool'"; exit 2 ;;
esac
