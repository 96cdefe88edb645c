package apf_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/pkg/apf"
)

func TestNewValidatesOptions(t *testing.T) {
	for _, tc := range []struct {
		opts apf.Options
		want string
	}{
		{apf.Options{}, "ServerConcurrencyLimit is 0"},
		{apf.Options{ServerConcurrencyLimit: -3}, "ServerConcurrencyLimit is -3"},
		{apf.Options{ServerConcurrencyLimit: 1, RequestTimeout: -time.Second}, "RequestTimeout is -1s"},
		{apf.Options{ServerConcurrencyLimit: 1, RetryAfter: -time.Second}, "RetryAfter is -1s"},
	} {
		if _, err := apf.New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error containing %q", tc.opts, err, tc.want)
		}
	}
}

func TestNewRegistersMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 1, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	f.Handler(http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	families, err := reg.Gather()
	if err != nil || len(families) == 0 {
		t.Fatalf("Gather = %d families, %v; want the filter's metrics", len(families), err)
	}
}

// TestHandlerIgnoresSpoofedHeaders checks the secure default: X-Remote-User and X-Remote-Group
// make nobody system:masters; the request is anonymous.
func TestHandlerIgnoresSpoofedHeaders(t *testing.T) {
	f := tinyFilter(t, apf.Options{})
	h := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/api/v1/pods", nil)
	r.Header.Set("X-Remote-User", "u")
	r.Header.Set("X-Remote-Group", "system:masters")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if got := rec.Header().Get(apf.HeaderFlowSchema); got != "anonymous" {
		t.Errorf("spoofed headers: FlowSchema %q; want anonymous (not users, not the system-top backstop)", got)
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r.WithContext(apf.WithUser(r.Context(), "u", nil)))
	if got := rec.Header().Get(apf.HeaderFlowSchema); got != "users" {
		t.Errorf("context user u: FlowSchema %q; want users", got)
	}
}

// headerIdentity is an IdentitySource an embedder might write.
type headerIdentity struct{}

func (headerIdentity) Identity(r *http.Request) (string, []string, bool) {
	name := r.Header.Get("X-Test-User")
	return name, nil, name != ""
}

func TestHandlerCustomIdentity(t *testing.T) {
	f := tinyFilter(t, apf.Options{Identity: headerIdentity{}})
	h := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for user, want := range map[string]string{"u": "users", "": "anonymous"} {
		r := httptest.NewRequest("GET", "/api/v1/pods", nil)
		r.Header.Set("X-Test-User", user)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if got := rec.Header().Get(apf.HeaderFlowSchema); got != want {
			t.Errorf("user %q: FlowSchema %q; want %q", user, got, want)
		}
	}
}

// TestHandlerRejects floods the one-seat level: one request runs, one waits, the third gets
// 429 with Retry-After; every request ends exactly once.
func TestHandlerRejects(t *testing.T) {
	f := tinyFilter(t, apf.Options{RetryAfter: 2500 * time.Millisecond})
	g := newGate()
	h := f.Handler(g)
	req := func() *http.Request {
		r := httptest.NewRequest("GET", "/api/v1/namespaces/a/pods", nil)
		return r.WithContext(apf.WithUser(r.Context(), "u", nil))
	}
	var wg sync.WaitGroup
	recs := []*httptest.ResponseRecorder{httptest.NewRecorder(), httptest.NewRecorder()}
	for i, rec := range recs {
		wg.Go(func() { h.ServeHTTP(rec, req()) })
		if i == 0 {
			<-g.entered
		}
	}
	waitFor(t, "the second request to queue", func() bool {
		return strings.Contains(debugState(t, f), `"waiting": 1`)
	})
	rejected := httptest.NewRecorder()
	h.ServeHTTP(rejected, req())
	if rejected.Code != http.StatusTooManyRequests || rejected.Header().Get("Retry-After") != "3" {
		t.Errorf("third request: %d, Retry-After %q; want 429, 3", rejected.Code, rejected.Header().Get("Retry-After"))
	}
	close(g.release)
	wg.Wait()
	for i, rec := range recs {
		if rec.Code != http.StatusOK {
			t.Errorf("request %d: %d; want 200", i, rec.Code)
		}
	}
}

func debugState(t *testing.T, f *apf.Filter) string {
	t.Helper()
	rec := httptest.NewRecorder()
	f.DebugHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/apf", nil))
	return rec.Body.String()
}

func TestServeRejectedError(t *testing.T) {
	f := tinyFilter(t, apf.Options{RequestTimeout: 80 * time.Millisecond}) // wait limit 20ms
	a := apf.Attributes{User: "u", Verb: "get", Resource: "pods", Namespace: "a", ResourceRequest: true}
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- f.Serve(context.Background(), &a, func(apf.Classification) { close(entered); <-release })
	}()
	<-entered
	ran := false
	err := f.Serve(context.Background(), &a, func(apf.Classification) { ran = true })
	var rejected *apf.RejectedError
	if !errors.As(err, &rejected) || ran {
		t.Fatalf("Serve = %v, exec ran %v; want a *RejectedError and no exec", err, ran)
	}
	if rejected.Reason != apf.ReasonTimeout || rejected.FlowSchema != "users" || rejected.RetryAfterSeconds() != 1 {
		t.Errorf("rejection %+v; want reason timeout at FlowSchema users, Retry-After 1", rejected)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("first request: %v", err)
	}
}

func TestServeLongRunningBypasses(t *testing.T) {
	f := tinyFilter(t, apf.Options{})
	var c apf.Classification
	a := apf.Attributes{User: "u", Verb: "get", Resource: "pods", Subresource: "log", Namespace: "a",
		Name: "p", ResourceRequest: true, LongRunning: true}
	if err := f.Serve(context.Background(), &a, func(got apf.Classification) { c = got }); err != nil {
		t.Fatal(err)
	}
	if !c.LongRunning || c.FlowSchema != "users" {
		t.Errorf("classification %+v; want long-running at FlowSchema users", c)
	}
}

func TestLoadManifestsReportsObjectsNotInEffect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	manifest := "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\nmetadata: {name: orphan}\n" +
		"spec: {matchingPriority: 10, requestPriority: {name: missing}, match: [{and: [{equals: {field: user, value: x}}]}]}\n"
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := apf.LoadManifests(path)
	if err == nil || !strings.Contains(err.Error(), `FlowSchema "orphan" is not in effect`) {
		t.Errorf("LoadManifests = %v; want an error naming FlowSchema orphan", err)
	}
	if _, err := apf.LoadManifests(); err == nil {
		t.Error("LoadManifests() without paths succeeded")
	}
}

func TestNewInformerSourceValidates(t *testing.T) {
	f := tinyFilter(t, apf.Options{})
	if _, err := apf.NewInformerSource(nil, f, logr.Discard()); err == nil {
		t.Error("NewInformerSource(nil config) succeeded")
	}
	if _, err := apf.NewInformerSourceForClient(nil, f, logr.Discard()); err == nil {
		t.Error("NewInformerSourceForClient(nil client) succeeded")
	}
}

// nopWriter is a ResponseWriter that keeps one header map and discards the rest.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// TestHandlerAllocatesNothing backs the claim of Filter.Handler: with the default identity
// source a served request costs no allocation in the filter.
func TestHandlerAllocatesNothing(t *testing.T) {
	f := tinyFilter(t, apf.Options{})
	h := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/api/v1/namespaces/a/pods", nil)
	r = r.WithContext(apf.WithUser(r.Context(), "u", nil))
	w := &nopWriter{h: http.Header{}}
	h.ServeHTTP(w, r)
	if n := testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) }); n != 0 {
		t.Errorf("Handler allocates %.1f times per request; want 0", n)
	}
}
