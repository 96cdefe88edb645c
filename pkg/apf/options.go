package apf

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// DefaultRequestTimeout is the request timeout assumed when Options.RequestTimeout is zero:
// kube-apiserver's default --request-timeout.
const DefaultRequestTimeout = time.Minute

// DefaultRetryAfter is the Retry-After of a rejection when Options.RetryAfter is zero.
const DefaultRetryAfter = time.Second

// Options configure a Filter. Only ServerConcurrencyLimit is required.
type Options struct {
	// ServerConcurrencyLimit is the number of seats shared by the limited RequestPriorities, in
	// width units (a read-only request takes 1, a mutating one 2). kube-apiserver's equivalent
	// is --max-requests-inflight plus --max-mutating-requests-inflight (600 by default).
	// Required: at least 1.
	ServerConcurrencyLimit int
	// RequestTimeout is the server's request timeout; a request waits in a queue at most a
	// quarter of it, as kube-apiserver does. Zero means DefaultRequestTimeout (a wait limit of
	// 15 seconds).
	RequestTimeout time.Duration
	// Clock is the time source; nil selects the real time, read as cheaply as each decision
	// allows: a clock published every millisecond while no request waits (only metrics use it
	// then), exact readings (the processor's time-stamp counter where the kernel trusts it,
	// else the system clock) once requests queue. SystemClock is the same without the
	// time-stamp counter; tests may pass a fake, which is read at every event.
	Clock Clock
	// Registerer receives the filter's Prometheus metrics; nil records none.
	Registerer prometheus.Registerer
	// RetryAfter is how long a rejected client is told to wait, sent in whole seconds rounded
	// up, at least 1. Zero means DefaultRetryAfter.
	RetryAfter time.Duration
	// Identity decides who each request comes from in Filter.Handler; nil means
	// ContextIdentity (the request context only, never headers). Package requestheader
	// believes front-proxy headers from clients with a verified certificate.
	Identity IdentitySource
}

// validate checks o and names the option and the fix of the first problem.
func (o *Options) validate() error {
	if o.ServerConcurrencyLimit < 1 {
		return fmt.Errorf("apf.Options.ServerConcurrencyLimit is %d: set it to the number of concurrent "+
			"requests the server can serve, at least 1 (kube-apiserver's default is 600)", o.ServerConcurrencyLimit)
	}
	if o.RequestTimeout < 0 {
		return fmt.Errorf("apf.Options.RequestTimeout is %s: set the server's request timeout, or 0 for %s",
			o.RequestTimeout, DefaultRequestTimeout)
	}
	if o.RetryAfter < 0 {
		return fmt.Errorf("apf.Options.RetryAfter is %s: set a positive duration, or 0 for %s",
			o.RetryAfter, DefaultRetryAfter)
	}
	return nil
}

// waitLimit is the longest a request waits in a queue: a quarter of the request timeout.
func (o *Options) waitLimit() time.Duration {
	timeout := o.RequestTimeout
	if timeout == 0 {
		timeout = DefaultRequestTimeout
	}
	return timeout / 4
}

// retryAfter is o.RetryAfter with its default applied.
func (o *Options) retryAfter() time.Duration {
	if o.RetryAfter == 0 {
		return DefaultRetryAfter
	}
	return o.RetryAfter
}

// dispatchOptions converts o for the engine; it fails if the metrics cannot be registered.
func (o *Options) dispatchOptions() (dispatch.Options, error) {
	d := dispatch.Options{ServerConcurrencyLimit: o.ServerConcurrencyLimit, WaitLimit: o.waitLimit(),
		Clock: dispatchClock(o.Clock)}
	if o.Registerer != nil {
		m, err := newMetrics(o.Registerer)
		if err != nil {
			return d, err
		}
		d.Metrics = m
	}
	return d, nil
}

// newMetrics registers the filter's metrics with reg, turning a registration panic into an
// error.
func newMetrics(reg prometheus.Registerer) (m *metrics.Metrics, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("apf.Options.Registerer: registering the flow-control metrics: %v: pass a registry "+
				"without conflicting collectors, or nil for no metrics", p)
		}
	}()
	return metrics.NewMetrics(reg), nil
}
