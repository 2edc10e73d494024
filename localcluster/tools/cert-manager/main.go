// Command cert-manager runs cert-manager's controllers for the local cluster: the ones a
// self-signed or CA issuer needs (issuers, certificates, certificate requests and their
// approver), built from cert-manager's public packages at the version go.mod pins.
//
// Upstream's own command lives in a separate module that is not on the Go module proxy,
// so this is a small main of our own; see docs/development.md ("cert-manager").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each of these registers its controller (controllerpkg.Register) or issuer type
	// (issuer.RegisterIssuer) in init. ACME, Vault and Venafi are left out: they need
	// services the local cluster does not have.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// Workers per controller, as upstream's default.
const workers = 5

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "kube-system",
		"namespace of the Secrets a ClusterIssuer refers to")
	namespace := flag.String("namespace", "", "watch only this namespace (default: all)")
	healthAddress := flag.String("health-address", "127.0.0.1:9403",
		"where GET /healthz answers ok once every controller's informers have synced")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "cert-manager: --kubeconfig is required")
		os.Exit(2)
	}
	logf.InitLogs()
	defer logf.FlushLogs()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "controller")
	if err := run(ctx, *healthAddress, controllerpkg.ContextOptions{
		Kubeconfig:         *kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		Namespace:          *namespace,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: *clusterResourceNamespace},
		// Upstream's defaults (internal/apis/config/controller/v1alpha1/defaults.go).
		CertificateOptions: controllerpkg.CertificateOptions{
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
		SchedulerOptions: controllerpkg.SchedulerOptions{MaxConcurrentChallenges: 60},
	}); err != nil {
		logf.Log.Error(err, "cert-manager controller failed")
		logf.FlushLogs()
		os.Exit(1)
	}
}

// run builds every registered controller, starts the informers they asked for, serves
// /healthz, and returns once ctx is done and every controller has stopped.
func run(ctx context.Context, healthAddress string, opts controllerpkg.ContextOptions) error {
	log := logf.FromContext(ctx)
	factory, err := controllerpkg.NewContextFactory(ctx, opts)
	if err != nil {
		return err
	}
	// Informers must be requested (by the constructors) before the factories start.
	built := map[string]controllerpkg.Interface{}
	for name, construct := range controllerpkg.Known() {
		if opts.Namespace != "" && name == "clusterissuers" {
			continue // a namespaced controller cannot watch cluster-scoped issuers
		}
		c, err := construct(factory)
		if err != nil {
			return fmt.Errorf("building controller %s: %w", name, err)
		}
		built[name] = c
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}

	var ready atomic.Bool
	listener, err := net.Listen("tcp", healthAddress)
	if err != nil {
		return err
	}
	server := &http.Server{Handler: healthHandler(&ready), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "health server stopped")
		}
	}()

	var wg sync.WaitGroup
	for name, c := range built {
		wg.Go(func() {
			log.Info("starting controller", "controller", name)
			if err := c.Run(workers, ctx); err != nil {
				log.Error(err, "controller stopped", "controller", name)
			}
		})
	}
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	base.GWShared.Start(ctx.Done())
	if err := waitSynced(ctx, base); err != nil {
		return err
	}
	ready.Store(true)
	log.Info("every informer synced; controllers running", "controllers", len(built), "health", listener.Addr().String())

	<-ctx.Done()
	ready.Store(false)
	wg.Wait()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return server.Shutdown(shutdown)
}

// waitSynced waits until the cert-manager and Kubernetes informers the controllers use have synced.
func waitSynced(ctx context.Context, c *controllerpkg.Context) error {
	for kind, synced := range c.SharedInformerFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("informer for %v did not sync", kind)
		}
	}
	for kind, synced := range c.KubeSharedInformerFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("informer for %s did not sync", kind)
		}
	}
	return nil
}

// healthHandler answers /healthz with 200 "ok" once ready, 503 before.
func healthHandler(ready *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "informers not synced yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}
