package eventratelimit

import (
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// buckets are the token buckets of one limit type of one EventRateLimit.
type buckets struct {
	typ   v1alpha1.EventRateLimitType
	limit rate.Limit
	burst int
	// server is the one bucket of type Server; nil for the keyed types.
	server *rate.Limiter

	mu sync.Mutex
	// cache holds the buckets of the keyed types, least recently used first out; guarded by mu
	// because a lookup that misses must add atomically (concurrent first requests of a key
	// share one bucket).
	cache *simplelru.LRU[string, *rate.Limiter]
}

// newBuckets returns the buckets of limit l with qps and burst divided by replicas (at least
// one token of burst).
func newBuckets(l *v1alpha1.EventRateLimitLimit, replicas int) *buckets {
	b := &buckets{
		typ:   l.Type,
		limit: rate.Limit(float64(l.QPS) / float64(replicas)),
		burst: max(1, int(l.Burst)/replicas),
	}
	if l.Type == v1alpha1.EventRateLimitServer {
		b.server = rate.NewLimiter(b.limit, b.burst)
		return b
	}
	size := v1alpha1.DefaultEventRateLimitCacheSize
	if l.CacheSize != nil && *l.CacheSize > 0 {
		size = int(*l.CacheSize)
	}
	b.cache, _ = simplelru.NewLRU[string, *rate.Limiter](size, nil) // size > 0: never fails
	return b
}

// take charges the bucket of key with one event at now. It reports whether the bucket had a
// token and, if not, how long until it has one.
func (b *buckets) take(key string, now time.Time) (bool, time.Duration) {
	l := b.bucket(key)
	if l.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - l.TokensAt(now)
	return false, time.Duration(math.Ceil(missing / float64(b.limit) * float64(time.Second)))
}

// bucket returns the bucket of key, adding a full one (and evicting the least recently used)
// when the key has none.
func (b *buckets) bucket(key string) *rate.Limiter {
	if b.server != nil {
		return b.server
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if l, ok := b.cache.Get(key); ok {
		return l
	}
	l := rate.NewLimiter(b.limit, b.burst)
	b.cache.Add(key, l)
	return l
}

// len returns the number of buckets held.
func (b *buckets) len() int {
	if b.server != nil {
		return 1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cache.Len()
}
