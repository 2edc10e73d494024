// pause holds a Pod sandbox's namespaces: it does nothing but wait, exits 0 on SIGINT or SIGTERM,
// and as PID 1 of the Pod's PID namespace (shareProcessNamespace) reaps the zombies handed to it,
// like upstream's pause.c. Static (CGO_ENABLED=0), so the image is this file alone.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (etcd-operator local cluster)")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		switch s {
		case syscall.SIGINT, syscall.SIGTERM:
			fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", s)
			os.Exit(0)
		case syscall.SIGCHLD:
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
