// One binary for the five Kubernetes commands the local cluster runs, as hyperkube was and k3s
// is: one link instead of five, one file in the cache instead of five. build.sh names it
// `kubernetes` and puts symlinks kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
// and kubelet beside it; the name a process is started by picks the command, so each behaves,
// and shows in ps, as its own binary. `kubernetes COMMAND args...` runs one by name too.
//
// Each case is the body of that command's main.go in k8s.io/kubernetes/cmd, and the blank
// imports are the union of theirs.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	_ "time/tzdata" // kube-apiserver and kube-controller-manager: CronJob time zones

	_ "k8s.io/client-go/plugin/pkg/client/auth" // kubectl: exec and OIDC credential plugins
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go's metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // the version metric
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

const commands = "kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet"

func main() {
	name := filepath.Base(os.Args[0])
	if name == "kubernetes" {
		if len(os.Args) < 2 {
			fmt.Fprintf(os.Stderr, "usage: kubernetes COMMAND [args] (%s), or run it by one of those names\n", commands)
			os.Exit(2)
		}
		// The command's name becomes its argv[0], as when it is run through its symlink.
		os.Args = os.Args[1:]
		name = os.Args[0]
	}
	switch name {
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "kube-scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kubelet":
		os.Exit(cli.Run(kubelet.NewKubeletCommand(context.Background())))
	case "kubectl":
		logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
		if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
			util.CheckErr(err)
		}
	default:
		fmt.Fprintf(os.Stderr, "kubernetes: unknown command %q (one of %s)\n", name, commands)
		os.Exit(2)
	}
}
