// The cluster DNS of the real nodes (issue 27): CoreDNS with the plugins it needs and no others,
// so the build compiles a few packages of the module instead of its every backend (clouds, etcd,
// kubernetes). The hosts plugin answers from the network's hosts file (localcluster/network/hosts.ts),
// which already holds every name the cluster DNS gives Services and Pods.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/template"
)

func init() {
	// The order plugins run in: template after hosts, for the NXDOMAIN of a name the hosts file
	// lacks (hosts alone answers SERVFAIL: it has no SOA to deny a name with).
	dnsserver.Directives = []string{"bind", "errors", "log", "hosts", "template"}
}

func main() { coremain.Run() }
