package autopilot_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// reading is one read of kube-apiserver's APF metrics, by priority level.
type reading struct {
	at time.Time
	// nominal are the nominal seats of every level.
	nominal map[string]float64
	// rejected and dispatched are counters summed over FlowSchemas and reasons.
	rejected, dispatched map[string]float64
	// wait is the queue-wait histogram of the requests that were executed (execute="true"):
	// a rejected request is observed too, with execute="false" and a wait of about nothing,
	// which would lower the percentiles of the level that rejects most.
	wait map[string]apfmetrics.Histogram
}

// read reads kube-apiserver's /metrics as the admin (exempt, so the read never waits).
func read(ctx context.Context, cs kubernetes.Interface) (*reading, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	fams, err := apfmetrics.Parse(raw, apfmetrics.Prefix)
	if err != nil {
		return nil, err
	}
	r := &reading{at: time.Now(), nominal: fams.ByLabel(apfmetrics.NominalSeatsMetric, apfmetrics.LevelLabel),
		rejected: fams.ByLabel(apfmetrics.RejectedMetric, apfmetrics.LevelLabel), dispatched: fams.ByLabel(apfmetrics.DispatchedMetric, apfmetrics.LevelLabel),
		wait: map[string]apfmetrics.Histogram{}}
	if len(r.nominal) == 0 {
		return nil, fmt.Errorf("kube-apiserver's /metrics has no %s", apfmetrics.NominalSeatsMetric)
	}
	for _, m := range fams[apfmetrics.WaitMetric].GetMetric() {
		if apfmetrics.Label(m, "execute") != "true" {
			continue
		}
		level := apfmetrics.Label(m, apfmetrics.LevelLabel)
		r.wait[level] = addHistogram(r.wait[level], m.GetHistogram().GetBucket(), float64(m.GetHistogram().GetSampleCount()))
	}
	return r, nil
}

// addHistogram adds one series' cumulative buckets to h (the series of one level share
// kube-apiserver's fixed bounds).
func addHistogram(h apfmetrics.Histogram, buckets []*dto.Bucket, count float64) apfmetrics.Histogram {
	if h.Bounds == nil {
		for _, b := range buckets {
			h.Bounds = append(h.Bounds, b.GetUpperBound())
		}
		h.Counts = make([]float64, len(h.Bounds))
	}
	for i, b := range buckets {
		if i < len(h.Counts) && h.Bounds[i] == b.GetUpperBound() {
			h.Counts[i] += float64(b.GetCumulativeCount())
		}
	}
	h.Count += count
	return h
}

// levelRun is what kube-apiserver counted of one level over one run.
type levelRun struct {
	Rejected, Dispatched float64
	// WaitP99 is the 99th percentile of queue wait of executed requests (seconds), estimated
	// as Prometheus' histogram_quantile does; Served counts those requests.
	WaitP99, Served float64
	// Wait is the run's queue-wait histogram of executed requests.
	Wait apfmetrics.Histogram
}

// runOf is what happened to each level between two readings.
func runOf(before, after *reading) map[string]levelRun {
	out := map[string]levelRun{}
	for level := range after.nominal {
		w := after.wait[level].Sub(before.wait[level])
		p99, _ := w.Quantile(0.99)
		out[level] = levelRun{Rejected: after.rejected[level] - before.rejected[level],
			Dispatched: after.dispatched[level] - before.dispatched[level], WaitP99: p99, Served: w.Count, Wait: w}
	}
	return out
}

// sample is what the sampler saw at one time: every level's nominal seats, the pool's native
// shares (spec.limited.nominalConcurrencyShares of the projected objects).
type sample struct {
	at      time.Time
	nominal map[string]float64
	shares  map[string]int32
}

// sampler reads the nominal seats and the pool's native shares every period until stopped.
type sampler struct {
	mu      sync.Mutex
	samples []sample
	errs    []error
	stop    context.CancelFunc
	done    chan struct{}
}

// startSampler starts sampling.
func startSampler(ctx context.Context, cs kubernetes.Interface, k8s client.Client, period time.Duration) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			s.take(ctx, cs, k8s)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) take(ctx context.Context, cs kubernetes.Interface, k8s client.Client) {
	r, err := read(ctx, cs)
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err == nil {
		err = k8s.List(ctx, &plcs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.errs = append(s.errs, err)
		}
		return
	}
	smp := sample{at: r.at, nominal: r.nominal, shares: map[string]int32{}}
	for _, tn := range tenants {
		for _, plc := range plcs.Items {
			if plc.Name == nativeLevel(tn.name) && plc.Spec.Limited != nil && plc.Spec.Limited.NominalConcurrencyShares != nil {
				smp.shares[tn.name] = *plc.Spec.Limited.NominalConcurrencyShares
			}
		}
	}
	s.samples = append(s.samples, smp)
}

// Stop ends sampling and returns the samples and the errors met.
func (s *sampler) Stop() ([]sample, []error) {
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.errs
}

// outsidePool are the levels not in the pool, sorted.
func outsidePool(nominal map[string]float64) []string {
	pool := map[string]bool{}
	for _, tn := range tenants {
		pool[nativeLevel(tn.name)] = true
	}
	var out []string
	for level := range nominal {
		if !pool[level] {
			out = append(out, level)
		}
	}
	sort.Strings(out)
	return out
}
