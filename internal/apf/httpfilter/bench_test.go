package httpfilter_test

import (
	"net/http"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/httpfilter"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// discardWriter is a ResponseWriter that keeps one header map, like a server connection does.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header       { return w.h }
func (*discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (*discardWriter) WriteHeader(int)             {}

// BenchmarkFilter measures the filter around a no-op handler: resolve, classify, dispatch,
// headers.
func BenchmarkFilter(b *testing.B) {
	e := apf.NewEngine(effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas()),
		dispatch.Options{ServerConcurrencyLimit: 600})
	h := httpfilter.New(e, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), httpfilter.Options{})
	r := get("/api/v1/namespaces/team-a/pods", "alice")
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
