package apiserverfilter_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"
)

// longRunning is kube-apiserver's LongRunningRequestCheck (BasicLongRunningRequestCheck with
// its verbs and subresources), spelled out to keep k8s.io/apiserver/pkg/server out of the test.
func longRunning(_ *http.Request, info *apirequest.RequestInfo) bool {
	return sets.New("watch", "proxy").Has(info.Verb) ||
		sets.New("attach", "exec", "proxy", "log", "portforward").Has(info.Subresource)
}

var requestInfos = &apirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api")}

// serverChain stands for the server's earlier filters: request info and authentication (the
// user named by the test's X-Test-User header; none: system:anonymous).
func serverChain(t *testing.T, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := requestInfos.NewRequestInfo(r)
		if err != nil {
			t.Error(err)
			return
		}
		u := &user.DefaultInfo{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}
		if name := r.Header.Get("X-Test-User"); name != "" {
			u = &user.DefaultInfo{Name: name, Groups: []string{"system:authenticated"}}
		}
		ctx := apirequest.WithUser(apirequest.WithRequestInfo(r.Context(), info), u)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// tinyFilter has one seat and one queue of length 1 at level "only"; FlowSchema "users" takes
// user u, "anonymous" takes system:anonymous.
func tinyFilter(t *testing.T) *apf.Filter {
	t.Helper()
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 1, RequestTimeout: 4 * time.Second, RetryAfter: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.Update(tinyObjects())
	return f
}

// tinyObjects are level "only" (one queue of length 1) and FlowSchemas "users" (user u) and
// "anonymous" (system:anonymous).
func tinyObjects() ([]v1alpha1.RequestPriority, []v1alpha1.FlowSchema) {
	rp := v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "only"}, Spec: v1alpha1.RequestPrioritySpec{
		PriorityLevel: 100, AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](1)}}
	return []v1alpha1.RequestPriority{rp}, []v1alpha1.FlowSchema{userSchema("users", "u"),
		userSchema("anonymous", "system:anonymous")}
}

func userSchema(name, userName string) v1alpha1.FlowSchema {
	return v1alpha1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority: 10, RequestPriority: v1alpha1.RequestPriorityReference{Name: "only"},
		Match: []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{
			{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldUser, Value: userName}}}}}}}
}

func get(path, userName string) *http.Request {
	r := httptest.NewRequest("GET", path, nil)
	if userName != "" {
		r.Header.Set("X-Test-User", userName)
	}
	return r
}

func TestClassificationFollowsContextUser(t *testing.T) {
	h := serverChain(t, apiserverfilter.WithPriorityAndFairness(http.NotFoundHandler(), tinyFilter(t), longRunning))
	spoofed := get("/api/v1/namespaces/a/pods", "")
	spoofed.Header.Set("X-Remote-User", "u")
	spoofed.Header.Set("X-Remote-Group", "system:masters")
	for _, tc := range []struct {
		r    *http.Request
		want string
	}{
		{get("/api/v1/namespaces/a/pods", "u"), "users"},
		{get("/healthz", "u"), "users"},
		{spoofed, "anonymous"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, tc.r)
		if got := rec.Header().Get(apf.HeaderFlowSchema); got != tc.want || rec.Header().Get(apf.HeaderRequestPriority) != "only" {
			t.Errorf("%s %v: FlowSchema %q; want %q at RequestPriority only", tc.r.URL, tc.r.Header, got, tc.want)
		}
	}
}

func TestMissingContextIs500(t *testing.T) {
	h := apiserverfilter.WithPriorityAndFairness(http.NotFoundHandler(), tinyFilter(t), longRunning)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get("/api/v1/pods", "u"))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "no RequestInfo") {
		t.Errorf("without RequestInfo: %d %q; want 500 naming the missing RequestInfo", rec.Code, rec.Body.String())
	}
	r := get("/api/v1/pods", "u")
	info, _ := requestInfos.NewRequestInfo(r)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r.WithContext(apirequest.WithRequestInfo(r.Context(), info)))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "no User") {
		t.Errorf("without user: %d %q; want 500 naming the missing user", rec.Code, rec.Body.String())
	}
}

// gate blocks each request until released.
type gate struct {
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 100), release: make(chan struct{})} }

func (g *gate) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	g.calls.Add(1)
	g.entered <- struct{}{}
	<-g.release
	w.WriteHeader(http.StatusOK)
}

// fill takes the level's seat and its queue slot, and returns a function that releases them
// and waits for both requests to end with 200.
func fill(t *testing.T, f *apf.Filter, h http.Handler, g *gate) func() {
	t.Helper()
	var wg sync.WaitGroup
	recs := []*httptest.ResponseRecorder{httptest.NewRecorder(), httptest.NewRecorder()}
	wg.Go(func() { h.ServeHTTP(recs[0], get("/api/v1/namespaces/a/pods", "u")) })
	<-g.entered
	wg.Go(func() { h.ServeHTTP(recs[1], get("/api/v1/namespaces/a/pods", "u")) })
	waitForQueued(t, f)
	return func() {
		close(g.release)
		wg.Wait()
		for i, rec := range recs {
			if rec.Code != http.StatusOK {
				t.Errorf("filling request %d: %d; want 200", i, rec.Code)
			}
		}
	}
}

// waitForQueued waits until one request waits in f's queues.
func waitForQueued(t *testing.T, f *apf.Filter) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec := httptest.NewRecorder()
		f.DebugHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/apf", nil))
		if strings.Contains(rec.Body.String(), `"waiting": 1`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for a request to queue")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLongRunningBypasses: with the level full, exec, log and proxy requests are served at once
// (classified, never queued) while an ordinary request and a watch are rejected.
func TestLongRunningBypasses(t *testing.T) {
	g := newGate()
	mux := http.NewServeMux()
	mux.Handle("/api/v1/namespaces/a/pods", g)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	f := tinyFilter(t)
	h := serverChain(t, apiserverfilter.WithPriorityAndFairness(mux, f, longRunning))
	release := fill(t, f, h, g)
	defer release()
	for _, path := range []string{"/api/v1/namespaces/a/pods/p/exec", "/api/v1/namespaces/a/pods/p/log?follow=true",
		"/api/v1/namespaces/a/pods/p/proxy", "/api/v1/namespaces/a/services/s/proxy/x"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, get(path, "u"))
		if rec.Code != http.StatusNoContent || rec.Header().Get(apf.HeaderFlowSchema) != "users" {
			t.Errorf("%s on a full level: %d, FlowSchema %q; want served at once (204), classified as users",
				path, rec.Code, rec.Header().Get(apf.HeaderFlowSchema))
		}
	}
	for _, path := range []string{"/api/v1/namespaces/b/pods", "/api/v1/namespaces/b/pods?watch=true"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, get(path, "u"))
		if rec.Code != http.StatusTooManyRequests {
			t.Errorf("%s on a full level: %d; want 429", path, rec.Code)
		}
	}
}

// TestFloodGetsStatus429: rejections are Status objects of reason TooManyRequests with
// Retry-After, written by the apiserver's response writers.
func TestFloodGetsStatus429(t *testing.T) {
	g := newGate()
	f := tinyFilter(t)
	h := serverChain(t, apiserverfilter.WithPriorityAndFairness(g, f, longRunning))
	release := fill(t, f, h, g)
	for range 5 {
		rec := httptest.NewRecorder()
		r := get("/api/v1/namespaces/a/pods", "u")
		r.Header.Set("Accept", "application/json")
		h.ServeHTTP(rec, r)
		checkStatus429(t, rec)
	}
	release()
	if n := g.calls.Load(); n != 2 {
		t.Errorf("the API handler ran %d times; want 2 (the rejected requests never reach it)", n)
	}
}

func checkStatus429(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	var status metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil {
		t.Fatalf("429 body %q is not a Status: %v", rec.Body.String(), err)
	}
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" ||
		status.Kind != "Status" || status.Reason != metav1.StatusReasonTooManyRequests ||
		status.Details == nil || status.Details.RetryAfterSeconds != 2 || rec.Header().Get(apf.HeaderFlowSchema) != "users" {
		t.Errorf("rejection: %d, Retry-After %q, headers %v, Status %+v; want 429, 2, a TooManyRequests Status "+
			"with retryAfterSeconds 2, FlowSchema users", rec.Code, rec.Header().Get("Retry-After"), rec.Header(), status)
	}
	if !strings.Contains(status.Message, "queue-full") || !strings.Contains(status.Message, `"only"`) {
		t.Errorf("Status message %q does not name the reason and the RequestPriority", status.Message)
	}
}

// countingWriter counts WriteHeader calls.
type countingWriter struct {
	*httptest.ResponseRecorder
	headers atomic.Int32
}

func (c *countingWriter) WriteHeader(code int) {
	c.headers.Add(1)
	c.ResponseRecorder.WriteHeader(code)
}

// TestExactlyOnce floods the one-seat level from 64 goroutines: every request ends exactly
// once, served (the API handler ran once for it) or rejected with 429.
func TestExactlyOnce(t *testing.T) {
	var served atomic.Int32
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		time.Sleep(time.Millisecond)
		w.WriteHeader(http.StatusOK)
	})
	h := serverChain(t, apiserverfilter.WithPriorityAndFairness(api, tinyFilter(t), longRunning))
	const n = 64
	writers := make([]*countingWriter, n)
	var wg sync.WaitGroup
	for i := range writers {
		writers[i] = &countingWriter{ResponseRecorder: httptest.NewRecorder()}
		wg.Go(func() { h.ServeHTTP(writers[i], get("/api/v1/namespaces/a/pods", "u")) })
	}
	wg.Wait()
	ok, rejected := 0, 0
	for i, w := range writers {
		if w.headers.Load() != 1 {
			t.Errorf("request %d: WriteHeader called %d times; want once", i, w.headers.Load())
		}
		switch w.Code {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			rejected++
		}
	}
	if ok+rejected != n || int32(ok) != served.Load() || rejected == 0 {
		t.Errorf("%d served (handler ran %d times), %d rejected of %d; want every request once, some rejected",
			ok, served.Load(), rejected, n)
	}
}

// TestProbesNeverQueued: with the level full, GET and HEAD of the health-check paths are
// served at once (classified, as kube-apiserver's "probes" FlowSchema exempts them), while
// other non-resource requests and other verbs on those paths are rejected; ProbePaths with no
// path flow-controls probes too.
func TestProbesNeverQueued(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []apiserverfilter.Option
		served []string // "METHOD path", anonymous
		denied []string
	}{
		{"default", nil,
			[]string{"GET /healthz", "GET /livez", "GET /readyz", "HEAD /readyz"},
			[]string{"GET /metrics", "GET /healthz/etcd", "POST /healthz", "GET /version"}},
		{"custom", []apiserverfilter.Option{apiserverfilter.ProbePaths("/ping")},
			[]string{"GET /ping"}, []string{"GET /healthz"}},
		{"none", []apiserverfilter.Option{apiserverfilter.ProbePaths()},
			nil, []string{"GET /healthz", "GET /readyz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate()
			mux := http.NewServeMux()
			mux.Handle("/api/v1/namespaces/a/pods", g)
			mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
			f := tinyFilter(t)
			h := serverChain(t, apiserverfilter.WithPriorityAndFairness(mux, f, longRunning, tc.opts...))
			release := fill(t, f, h, g)
			defer release()
			probe := func(call string) *httptest.ResponseRecorder {
				method, path, _ := strings.Cut(call, " ")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
				return rec
			}
			for _, call := range tc.served {
				if rec := probe(call); rec.Code != http.StatusNoContent || rec.Header().Get(apf.HeaderFlowSchema) != "anonymous" {
					t.Errorf("%s on a full level: %d, FlowSchema %q; want served at once (204), classified as anonymous",
						call, rec.Code, rec.Header().Get(apf.HeaderFlowSchema))
				}
			}
			for _, call := range tc.denied {
				if rec := probe(call); rec.Code != http.StatusTooManyRequests {
					t.Errorf("%s on a full level: %d; want 429", call, rec.Code)
				}
			}
		})
	}
}
