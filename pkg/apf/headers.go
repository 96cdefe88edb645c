package apf

import (
	"net/http"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/httpfilter"
)

// headerValues holds one header value slice per FlowSchema and RequestPriority name of one
// configuration. The slices are shared by every response, read-only: each has capacity 1, so
// an Add to the header copies it and a Set replaces it.
type headerValues struct {
	cfg    *effective.Config
	values map[string][]string
}

func newHeaderValues(cfg *effective.Config) *headerValues {
	v := &headerValues{cfg: cfg, values: make(map[string][]string, 2*len(cfg.Schemas)+len(cfg.Priorities)+2)}
	for _, s := range append(append([]*effective.Schema{}, cfg.Schemas...), cfg.MastersBackstop, cfg.CatchAll) {
		v.values[s.Name] = []string{s.Name}[:1:1]
	}
	for _, p := range cfg.Priorities {
		v.values[p.Name] = []string{p.Name}[:1:1]
	}
	return v
}

func (v *headerValues) of(name string) []string {
	if s, ok := v.values[name]; ok {
		return s
	}
	return []string{name} // a name of an older configuration
}

// SetClassificationHeaders sets HeaderFlowSchema and HeaderRequestPriority on h to name c's
// FlowSchema and RequestPriority, as Filter.Handler does on every response. It allocates
// nothing for the names of the configuration in force.
func (f *Filter) SetClassificationHeaders(h http.Header, c *Classification) {
	v := f.headers.Load()
	if cfg := f.engine.Config(); v == nil || v.cfg != cfg {
		v = newHeaderValues(cfg)
		f.headers.Store(v)
	}
	h[httpfilter.CanonicalFlowSchema] = v.of(c.FlowSchema)
	h[httpfilter.CanonicalRequestPriority] = v.of(c.RequestPriority)
}
