package httpfilter

import (
	"net/http"
	"sync/atomic"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// Canonical forms of the header names, for direct map assignment (http.Header keys are
// canonical; X-APF-... is not).
var (
	CanonicalFlowSchema      = http.CanonicalHeaderKey(HeaderFlowSchema)
	CanonicalRequestPriority = http.CanonicalHeaderKey(HeaderRequestPriority)
)

// headerValues are the values of the two classification headers for one FlowSchema. They are
// shared by every response of the FlowSchema, read-only: each slice has capacity 1, so an Add
// to the header copies it and Set replaces it.
type headerValues struct {
	schema, priority []string
}

func newHeaderValues(s *effective.Schema) headerValues {
	return headerValues{schema: []string{s.Name}[:1:1], priority: []string{s.Priority.Name}[:1:1]}
}

// headerCache holds the header values of every FlowSchema of one configuration.
type headerCache struct {
	cfg    *effective.Config
	values map[*effective.Schema]headerValues
}

func newHeaderCache(cfg *effective.Config) *headerCache {
	c := &headerCache{cfg: cfg, values: make(map[*effective.Schema]headerValues, len(cfg.Schemas)+2)}
	for _, s := range append(append([]*effective.Schema{}, cfg.Schemas...), cfg.MastersBackstop, cfg.CatchAll) {
		c.values[s] = newHeaderValues(s)
	}
	return c
}

// classificationHeaders builds the header values once per configuration, so that a response
// costs no allocation for them.
type classificationHeaders struct {
	engine *apf.Engine
	cache  atomic.Pointer[headerCache]
}

// set sets the classification headers of res on h.
func (c *classificationHeaders) set(h http.Header, res *apf.Result) {
	v := c.valuesFor(res.Schema)
	h[CanonicalFlowSchema] = v.schema
	h[CanonicalRequestPriority] = v.priority
}

func (c *classificationHeaders) valuesFor(s *effective.Schema) headerValues {
	cache := c.cache.Load()
	if cfg := c.engine.Config(); cache == nil || cache.cfg != cfg {
		cache = newHeaderCache(cfg)
		c.cache.Store(cache)
	}
	if v, ok := cache.values[s]; ok {
		return v
	}
	return newHeaderValues(s) // classified against an older configuration
}
