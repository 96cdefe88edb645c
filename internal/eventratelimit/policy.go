package eventratelimit

import (
	"sync/atomic"
	"time"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Config is one EventRateLimit object as the engine enforces it.
type Config struct {
	// Name identifies the object (its status reports the policy's counts).
	Name string
	// Generation is the object's metadata.generation: a policy is rebuilt (full buckets,
	// counts from zero) only when it changes.
	Generation int64
	// Spec must be valid (validation.EventRateLimitSpec); the reconciler leaves out the others.
	Spec v1alpha1.EventRateLimitSpec
}

// policy enforces one EventRateLimit object.
type policy struct {
	config   Config
	replicas int
	since    time.Time
	buckets  []*buckets
	// byType[type index] is the buckets of that type, nil when the object does not limit it.
	byType   [4]*buckets
	accepted atomic.Int64
	rejected atomic.Int64
}

func newPolicy(c Config, replicas int, now time.Time) *policy {
	p := &policy{config: c, replicas: replicas, since: now}
	for i := range c.Spec.Limits {
		b := newBuckets(&c.Spec.Limits[i], replicas)
		p.buckets = append(p.buckets, b)
		p.byType[typeIndex(b.typ)] = b
	}
	return p
}

// admit charges every bucket of the request (each independently) and reports whether all had
// a token and, if not, the longest wait among those that had none.
func (p *policy) admit(a *Attributes, now time.Time, m *Metrics) (bool, time.Duration) {
	allowed, wait := true, time.Duration(0)
	for _, b := range p.buckets {
		ok, w := b.take(a.key(b.typ), now)
		if m != nil {
			m.decisions[typeIndex(b.typ)][resultIndex(ok)].Inc()
		}
		if !ok {
			allowed, wait = false, max(wait, w)
		}
	}
	if allowed {
		p.accepted.Add(1)
	} else {
		p.rejected.Add(1)
	}
	return allowed, wait
}
