package eventratelimit

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Engine decides event creations against the enforced EventRateLimit objects. Admit is safe
// for concurrent use with itself, Update and SetReplicas.
type Engine struct {
	clock   clock.PassiveClock
	metrics *Metrics

	// mu serialises Update and SetReplicas; Admit reads policies without it.
	mu       sync.Mutex
	replicas int
	policies atomic.Pointer[[]*policy]
}

// Decision is the verdict on one event creation.
type Decision struct {
	// Allowed is true when every bucket of every enforced object had a token.
	Allowed bool
	// RetryAfter is, for a rejection, how long until every rejecting bucket holds a token.
	RetryAfter time.Duration
	// RejectedBy names the first object that rejected the event.
	RejectedBy string
}

// New returns an engine that enforces nothing until Update; clk times the buckets (nil: the real
// clock); metrics may be nil.
func New(clk clock.PassiveClock, metrics *Metrics) *Engine {
	if clk == nil {
		clk = clock.RealClock{}
	}
	e := &Engine{clock: clk, metrics: metrics, replicas: 1}
	e.policies.Store(&[]*policy{})
	return e
}

// Admit charges the buckets of an event creation and decides it. The caller checks
// Attributes.Unattributed first: Admit charges whatever keys it is given.
func (e *Engine) Admit(a *Attributes) Decision {
	now := e.clock.Now()
	d := Decision{Allowed: true}
	for _, p := range *e.policies.Load() {
		ok, wait := p.admit(a, now, e.metrics)
		if !ok {
			if d.Allowed {
				d.RejectedBy = p.config.Name
			}
			d.Allowed, d.RetryAfter = false, max(d.RetryAfter, wait)
		}
	}
	if e.metrics != nil {
		e.metrics.events[resultIndex(d.Allowed)].Inc()
	}
	return d
}

// Uses reports whether any enforced object limits type t (the webhook decodes the event only
// when SourceAndObject is limited).
func (e *Engine) Uses(t v1alpha1.EventRateLimitType) bool {
	i := typeIndex(t)
	for _, p := range *e.policies.Load() {
		if p.byType[i] != nil {
			return true
		}
	}
	return false
}

// Update makes configs the enforced objects. An object whose name and generation are unchanged
// keeps its buckets and counts; a new or changed one starts with full buckets.
func (e *Engine) Update(configs []Config) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := map[string]*policy{}
	for _, p := range *e.policies.Load() {
		old[p.config.Name] = p
	}
	now := e.clock.Now()
	next := make([]*policy, 0, len(configs))
	for _, c := range configs {
		if p, ok := old[c.Name]; ok && p.config.Generation == c.Generation && p.replicas == e.replicas {
			next = append(next, p)
			continue
		}
		next = append(next, newPolicy(c, e.replicas, now))
	}
	e.policies.Store(&next)
}

// SetReplicas divides every limit's qps and burst by n (at least 1), the number of webhook
// replicas that share the traffic. A change rebuilds the buckets full; counts are kept.
func (e *Engine) SetReplicas(n int) {
	n = max(1, n)
	e.mu.Lock()
	defer e.mu.Unlock()
	if n == e.replicas {
		return
	}
	e.replicas = n
	cur := *e.policies.Load()
	next := make([]*policy, 0, len(cur))
	for _, p := range cur {
		np := newPolicy(p.config, n, p.since)
		np.accepted.Store(p.accepted.Load())
		np.rejected.Store(p.rejected.Load())
		next = append(next, np)
	}
	e.policies.Store(&next)
}

// Replicas returns the divisor SetReplicas set.
func (e *Engine) Replicas() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.replicas
}

// Counts are what one enforced object decided in this process.
type Counts struct {
	// Accepted and Rejected count the event creations the object's limits admitted and
	// rejected since Since (when the engine started enforcing this generation).
	Accepted, Rejected int64
	Since              time.Time
	// Generation is the object generation being enforced.
	Generation int64
}

// Counts returns the counts of the object named name, and false when it is not enforced.
func (e *Engine) Counts(name string) (Counts, bool) {
	for _, p := range *e.policies.Load() {
		if p.config.Name == name {
			return Counts{Accepted: p.accepted.Load(), Rejected: p.rejected.Load(), Since: p.since,
				Generation: p.config.Generation}, true
		}
	}
	return Counts{}, false
}

// BucketCount returns how many buckets of type t the object named name holds (for tests and
// debugging: it proves the LRU bound).
func (e *Engine) BucketCount(name string, t v1alpha1.EventRateLimitType) int {
	for _, p := range *e.policies.Load() {
		if b := p.byType[typeIndex(t)]; p.config.Name == name && b != nil {
			return b.len()
		}
	}
	return 0
}
