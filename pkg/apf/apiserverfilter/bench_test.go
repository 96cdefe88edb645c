package apiserverfilter_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"
)

// nopWriter is a ResponseWriter that keeps nothing, so that the benchmark measures the filter.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkDropIn is one uncontended list through the drop-in: classify, admit, serve a no-op
// handler, finish, with the request info and user already in the context.
func BenchmarkDropIn(b *testing.B) {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		b.Fatal(err)
	}
	f.Update(tinyObjects())
	h := apiserverfilter.WithPriorityAndFairness(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), f, longRunning)
	r := httptest.NewRequest("GET", "/api/v1/namespaces/a/pods", nil)
	info, err := requestInfos.NewRequestInfo(r)
	if err != nil {
		b.Fatal(err)
	}
	ctx := apirequest.WithUser(apirequest.WithRequestInfo(r.Context(), info),
		&user.DefaultInfo{Name: "u", Groups: []string{"system:authenticated"}})
	r = r.WithContext(ctx)
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
