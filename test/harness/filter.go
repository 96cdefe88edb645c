package harness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/httpfilter"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apf/source"
)

// FilterOptions configure a FilterServer.
type FilterOptions struct {
	// ServerConcurrencyLimit is the SCL in width units.
	ServerConcurrencyLimit int
	// ServiceTime is how long the embedded "API server" takes to serve each request.
	ServiceTime time.Duration
}

// FilterServer is an HTTP server on loopback that embeds the filter the way an API server
// would: its configuration comes live from the cluster's RequestPriority and FlowSchema objects
// (package source), its metrics are on /metrics and its state on /debug/apf, both outside
// flow control, and every other path is an API request that takes ServiceTime.
type FilterServer struct {
	// URL is the server's base URL.
	URL    string
	Engine *apf.Engine
	server *http.Server
	cancel context.CancelFunc
	done   chan error
}

// StartFilterServer starts a FilterServer fed from the cluster at cfg, and waits until the
// first effective configuration has been applied.
func StartFilterServer(ctx context.Context, cfg *rest.Config, opts FilterOptions) (*FilterServer, error) {
	registry := prometheus.NewRegistry()
	engine := apf.NewEngine(nil, dispatch.Options{ServerConcurrencyLimit: opts.ServerConcurrencyLimit,
		Metrics: metrics.NewMetrics(registry)})
	src, err := source.New(cfg, func(c *effective.Config) { engine.Update(c) }, logr.Discard())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	fs := &FilterServer{Engine: engine, cancel: cancel, done: make(chan error, 2)}
	go func() { fs.done <- src.Run(ctx) }()
	if err := waitFor(ctx, 30*time.Second, src.HasSynced); err != nil {
		cancel()
		return nil, fmt.Errorf("the filter's configuration source did not sync: %w", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, err
	}
	fs.URL = "http://" + listener.Addr().String()
	fs.server = &http.Server{Handler: fs.routes(registry, opts.ServiceTime), ReadHeaderTimeout: 5 * time.Second}
	go func() { fs.done <- ignoreClosed(fs.server.Serve(listener)) }()
	return fs, nil
}

func (fs *FilterServer) routes(registry *prometheus.Registry, serviceTime time.Duration) http.Handler {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(serviceTime):
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
		}
	})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	mux.Handle("/debug/apf", httpfilter.DebugHandler(fs.Engine))
	// The overload clients name themselves in X-Remote-User / X-Remote-Group (RunOverload) and
	// this loopback test server has no authenticator, so it opts in to trusting those headers.
	// A real server must not: see request.KubernetesResolver.TrustProxyHeaders.
	trusting := request.KubernetesResolver{TrustProxyHeaders: true}
	mux.Handle("/", httpfilter.New(fs.Engine, trusting, api, httpfilter.Options{}))
	return mux
}

// Stop shuts the server and its configuration source down.
func (fs *FilterServer) Stop() error {
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := fs.server.Shutdown(shutdownCtx)
	fs.cancel()
	if e := <-fs.done; e != nil && err == nil {
		err = e
	}
	if e := <-fs.done; e != nil && err == nil {
		err = e
	}
	return err
}

func ignoreClosed(err error) error {
	if err == http.ErrServerClosed {
		return nil
	}
	return err
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
