package httpfilter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/httpfilter"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// oneQueueEngine has level "only" (one queue, length limit 1) for user u's requests, and a
// server concurrency limit of 1.
func oneQueueEngine(waitLimit time.Duration) *apf.Engine {
	rp := flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "only"}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: 100, AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](1)}}
	fs := flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "users"}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: 10, RequestPriority: flowv1.RequestPriorityReference{Name: "only"},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: "u"}}}}}}}
	cfg := effective.Compute([]flowv1.RequestPriority{rp}, []flowv1.FlowSchema{fs})
	return apf.NewEngine(cfg, dispatch.Options{ServerConcurrencyLimit: 1, WaitLimit: waitLimit})
}

func get(path, user string) *http.Request {
	r := httptest.NewRequest("GET", path, nil)
	if user != "" {
		r = r.WithContext(request.WithUser(r.Context(), user, nil))
	}
	return r
}

// gate is a handler that blocks each request until released.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 16), release: make(chan struct{})} }

func (g *gate) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	g.entered <- struct{}{}
	<-g.release
	w.WriteHeader(http.StatusNoContent)
}

func serveAsync(h http.Handler, r *http.Request) (*httptest.ResponseRecorder, *sync.WaitGroup) {
	rec := httptest.NewRecorder()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); h.ServeHTTP(rec, r) }()
	return rec, &wg
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func checkRejected(t *testing.T, rec *httptest.ResponseRecorder, reason, retryAfter string) {
	t.Helper()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", rec.Code)
	}
	if got := rec.Header().Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After %q, want %q", got, retryAfter)
	}
	body := rec.Body.String()
	if !strings.Contains(body, "("+reason+")") || !strings.Contains(body, `RequestPriority "only"`) ||
		!strings.Contains(body, `FlowSchema "users"`) {
		t.Errorf("body %q does not name the reason %s, the RequestPriority and the FlowSchema", body, reason)
	}
	if rec.Header().Get(httpfilter.HeaderFlowSchema) != "users" || rec.Header().Get(httpfilter.HeaderRequestPriority) != "only" {
		t.Errorf("rejection headers %v; want the FlowSchema and RequestPriority named", rec.Header())
	}
}

func TestFilterHeadersOnExecutedRequests(t *testing.T) {
	e := apf.NewEngine(effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas()),
		dispatch.Options{ServerConcurrencyLimit: 10})
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	h := httpfilter.New(e, nil, next, httpfilter.Options{})
	cases := []struct {
		r                *http.Request
		schema, priority string
	}{
		{get("/api/v1/namespaces/team-a/pods", "alice"), "workload-high", "workload-high"},
		{get("/api/v1/namespaces/team-a/pods", "system:serviceaccount:team-a:x"), "workload-low", "workload-low"},
		{get("/healthz", "alice"), "non-top-backstop", "workload-low"},
		{get("/api/v1/namespaces/team-a/pods?watch=true", "alice"), "workload-high", "workload-high"},
	}
	nodeReq := httptest.NewRequest("PUT", "/api/v1/nodes/n1/status", nil)
	nodeReq = nodeReq.WithContext(request.WithUser(nodeReq.Context(), "system:node:n1", []string{"system:nodes"}))
	cases = append(cases, struct {
		r                *http.Request
		schema, priority string
	}{nodeReq, "system-high", "system-high"})
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, c.r)
		if rec.Code != http.StatusOK || rec.Body.String() != "ok" {
			t.Errorf("%s %s: %d %q; want 200 ok", c.r.Method, c.r.URL, rec.Code, rec.Body.String())
		}
		if got := rec.Header().Get(httpfilter.HeaderFlowSchema); got != c.schema {
			t.Errorf("%s %s: %s = %q, want %q", c.r.Method, c.r.URL, httpfilter.HeaderFlowSchema, got, c.schema)
		}
		if got := rec.Header().Get(httpfilter.HeaderRequestPriority); got != c.priority {
			t.Errorf("%s %s: %s = %q, want %q", c.r.Method, c.r.URL, httpfilter.HeaderRequestPriority, got, c.priority)
		}
	}
}

func TestFilterQueueFull(t *testing.T) {
	e := oneQueueEngine(time.Minute)
	g := newGate()
	h := httpfilter.New(e, nil, g, httpfilter.Options{RetryAfter: 2500 * time.Millisecond})

	first, firstDone := serveAsync(h, get("/api/v1/namespaces/a/pods", "u"))
	<-g.entered
	second, secondDone := serveAsync(h, get("/api/v1/namespaces/a/pods", "u"))
	waitFor(t, "the second request to queue", func() bool { return e.State().Waiting == 1 })

	third := httptest.NewRecorder()
	h.ServeHTTP(third, get("/api/v1/namespaces/a/pods", "u"))
	checkRejected(t, third, "queue-full", "3")

	// A long-running request of the full level passes, with its headers.
	watch := httptest.NewRecorder()
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); h.ServeHTTP(watch, get("/api/v1/namespaces/a/pods?watch=1", "u")) }()
	<-g.entered
	if e.State().ExecutingWidth != 1 {
		t.Errorf("the watch is counted: executing width %d, want 1", e.State().ExecutingWidth)
	}

	close(g.release)
	firstDone.Wait()
	secondDone.Wait()
	<-watchDone
	for name, rec := range map[string]*httptest.ResponseRecorder{"first": first, "second": second, "watch": watch} {
		if rec.Code != http.StatusNoContent || rec.Header().Get(httpfilter.HeaderFlowSchema) != "users" {
			t.Errorf("%s request: %d, headers %v; want 204 with the FlowSchema header", name, rec.Code, rec.Header())
		}
	}
}

func TestFilterTimeout(t *testing.T) {
	e := oneQueueEngine(20 * time.Millisecond)
	g := newGate()
	h := httpfilter.New(e, nil, g, httpfilter.Options{})
	_, firstDone := serveAsync(h, get("/api/v1/namespaces/a/pods", "u"))
	<-g.entered

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get("/api/v1/namespaces/a/pods", "u")) // waits the 20ms wait limit
	checkRejected(t, rec, "timeout", "1")
	close(g.release)
	firstDone.Wait()
}

func TestFilterCancelled(t *testing.T) {
	e := oneQueueEngine(time.Minute)
	g := newGate()
	h := httpfilter.New(e, nil, g, httpfilter.Options{})
	_, firstDone := serveAsync(h, get("/api/v1/namespaces/a/pods", "u"))
	<-g.entered

	queued := get("/api/v1/namespaces/a/pods", "u")
	ctx, cancel := context.WithCancel(queued.Context())
	rec, done := serveAsync(h, queued.WithContext(ctx))
	waitFor(t, "the request to queue", func() bool { return e.State().Waiting == 1 })
	cancel()
	done.Wait()
	checkRejected(t, rec, "cancelled", "1")
	if e.State().Waiting != 0 {
		t.Errorf("the cancelled request still waits")
	}
	close(g.release)
	firstDone.Wait()
}

func TestFilterCustomResolver(t *testing.T) {
	e := oneQueueEngine(time.Minute)
	var seen string
	resolver := request.ResolverFunc(func(r *http.Request, out *request.Attributes) {
		*out = request.Attributes{User: r.Header.Get("X-Tenant"), Verb: "get", Path: r.URL.Path}
	})
	h := httpfilter.New(e, resolver, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		seen = w.Header().Get(httpfilter.HeaderFlowSchema)
	}), httpfilter.Options{})
	r := httptest.NewRequest("GET", "/anything", nil)
	r.Header.Set("X-Tenant", "u")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if seen != "users" || rec.Header().Get(httpfilter.HeaderRequestPriority) != "only" {
		t.Errorf("custom resolver: FlowSchema header %q seen by the handler, priority %q; want users, only",
			seen, rec.Header().Get(httpfilter.HeaderRequestPriority))
	}
}

// TestFilterRealServer checks the 429 a real HTTP client receives.
func TestFilterRealServer(t *testing.T) {
	e := oneQueueEngine(time.Minute)
	g := newGate()
	// The client names itself in X-Remote-User, so this server opts in to trusting the header.
	srv := httptest.NewServer(httpfilter.New(e, request.KubernetesResolver{TrustProxyHeaders: true}, g, httpfilter.Options{}))
	defer srv.Close()
	do := func() *http.Response {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/a/pods", nil)
		req.Header.Set(request.HeaderUser, "u")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Error(err)
			return nil
		}
		return resp
	}
	results := make(chan *http.Response, 2)
	go func() { results <- do() }()
	<-g.entered
	go func() { results <- do() }()
	waitFor(t, "the second request to queue", func() bool { return e.State().Waiting == 1 })
	resp := do()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" ||
		!strings.Contains(string(body), "queue-full") {
		t.Errorf("got %d Retry-After=%q %q; want 429, 1, queue-full", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(g.release)
	for range 2 {
		if r := <-results; r != nil {
			r.Body.Close()
			if r.StatusCode != http.StatusNoContent {
				t.Errorf("queued request: %d, want 204", r.StatusCode)
			}
		}
	}
}

func TestDebugHandler(t *testing.T) {
	e := oneQueueEngine(time.Minute)
	g := newGate()
	h := httpfilter.New(e, nil, g, httpfilter.Options{})
	_, firstDone := serveAsync(h, get("/api/v1/namespaces/a/pods", "u"))
	<-g.entered
	_, secondDone := serveAsync(h, get("/api/v1/namespaces/a/pods", "u"))
	waitFor(t, "the second request to queue", func() bool { return e.State().Waiting == 1 })

	rec := httptest.NewRecorder()
	httpfilter.DebugHandler(e).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/apf", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("debug: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var st httpfilter.DebugState
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("debug JSON: %v\n%s", err, rec.Body.String())
	}
	var names []string
	for _, fs := range st.FlowSchemas {
		names = append(names, fs.Name+"->"+fs.RequestPriority)
	}
	if got := strings.Join(names, ","); got != "system-top->system-top,users->only,non-top-backstop->only" {
		t.Errorf("flowSchemas %s", got)
	}
	if len(st.Priorities) != 2 || st.Priorities[0].Name != "system-top" || !st.Priorities[0].Exempt ||
		st.Priorities[1].Name != "only" || st.Priorities[1].QueueLengthLimit != 1 {
		t.Errorf("requestPriorities %+v", st.Priorities)
	}
	var only *dispatch.LevelState
	for i := range st.Dispatcher.Levels {
		if st.Dispatcher.Levels[i].Name == "only" {
			only = &st.Dispatcher.Levels[i]
		}
	}
	if only == nil || only.Waiting != 1 || only.ExecutingWidth != 1 || len(only.Queues) != 1 || only.Queues[0].Length != 1 {
		t.Errorf("dispatcher level only: %+v; want 1 waiting in one queue, width 1 executing", only)
	}
	if st.Dispatcher.Waiting != 1 || st.Dispatcher.ServerConcurrencyLimit != 1 {
		t.Errorf("dispatcher counts %+v", st.Dispatcher)
	}

	rec = httptest.NewRecorder()
	httpfilter.DebugHandler(e).ServeHTTP(rec, httptest.NewRequest("POST", "/debug/apf", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST debug: %d, want 405", rec.Code)
	}
	close(g.release)
	firstDone.Wait()
	secondDone.Wait()
}
