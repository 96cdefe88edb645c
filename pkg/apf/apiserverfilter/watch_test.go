package apiserverfilter_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"
)

// watchServer serves watches of namespace w that initialise when init is closed (calling
// the server's WatchInitialized, as its watch cache does) and end when end is closed, and
// answers every other request at once with 204.
type watchServer struct {
	entered   chan struct{}
	init, end chan struct{}
	signal    bool // call WatchInitialized; false: a storage that never does
	panicWith any  // panic with this value after init, if set
}

func newWatchServer(signal bool) *watchServer {
	return &watchServer{entered: make(chan struct{}, 10), init: make(chan struct{}), end: make(chan struct{}), signal: signal}
}

func (s *watchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("watch") != "true" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.entered <- struct{}{}
	<-s.init
	if s.signal {
		utilflowcontrol.WatchInitialized(r.Context())
	}
	if s.panicWith != nil {
		panic(s.panicWith)
	}
	<-s.end
	w.WriteHeader(http.StatusOK)
}

// serveAsync serves r on h in a goroutine; the recorder is complete once done is closed.
func serveAsync(h http.Handler, r *http.Request) (rec *httptest.ResponseRecorder, done chan struct{}) {
	rec, done = httptest.NewRecorder(), make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, r)
	}()
	return rec, done
}

func waitDone(t *testing.T, done chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func isDone(done chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// TestWatchHoldsSeatUntilInitialised: a watch takes the level's only seat while it initialises
// (a list queues behind it), gives it back when the server signals the initialisation (the list
// is served while the watch goes on), and ends when its handler ends.
func TestWatchHoldsSeatUntilInitialised(t *testing.T) {
	s := newWatchServer(true)
	f := tinyFilter(t)
	h := serverChain(t, apiserverfilter.WithPriorityAndFairness(s, f, longRunning))

	watchRec, watchDone := serveAsync(h, get("/api/v1/namespaces/w/pods?watch=true", "u"))
	<-s.entered
	listRec, listDone := serveAsync(h, get("/api/v1/namespaces/b/pods", "u"))
	waitForQueued(t, f)
	close(s.init)
	waitDone(t, listDone, "the list queued behind the initialising watch")
	if listRec.Code != http.StatusNoContent {
		t.Fatalf("list after the watch initialised: %d; want 204", listRec.Code)
	}
	if isDone(watchDone) {
		t.Fatal("the watch ended when it initialised; want it served until its handler returns")
	}
	close(s.end)
	waitDone(t, watchDone, "the watch")
	if watchRec.Code != http.StatusOK || watchRec.Header().Get(apf.HeaderFlowSchema) != "users" {
		t.Fatalf("watch: %d, FlowSchema %q; want 200 classified as users", watchRec.Code, watchRec.Header().Get(apf.HeaderFlowSchema))
	}
}

// TestWatchWithoutSignalHoldsSeatToTheEnd: a watch the server never signals (storage without
// a watch cache) holds its seat until its handler returns, as upstream's filter does.
func TestWatchWithoutSignalHoldsSeatToTheEnd(t *testing.T) {
	s := newWatchServer(false)
	f := tinyFilter(t)
	h := serverChain(t, apiserverfilter.WithPriorityAndFairness(s, f, longRunning))

	_, watchDone := serveAsync(h, get("/api/v1/namespaces/w/pods?watch=true", "u"))
	<-s.entered
	close(s.init)
	listRec, listDone := serveAsync(h, get("/api/v1/namespaces/b/pods", "u"))
	waitForQueued(t, f)
	if isDone(listDone) {
		t.Fatal("the list was served while the unsignalled watch held the only seat")
	}
	close(s.end)
	waitDone(t, watchDone, "the watch")
	waitDone(t, listDone, "the list after the watch ended")
	if listRec.Code != http.StatusNoContent {
		t.Fatalf("list after the watch: %d; want 204", listRec.Code)
	}
}

// TestWatchPanicReachesTheCaller: a panic in the watch handler's goroutine is raised again in
// the goroutine that called ServeHTTP (where the server's panic recovery runs), and the seat
// is free afterwards.
func TestWatchPanicReachesTheCaller(t *testing.T) {
	s := newWatchServer(false)
	s.panicWith = http.ErrAbortHandler
	close(s.init)
	f := tinyFilter(t)
	h := serverChain(t, apiserverfilter.WithPriorityAndFairness(s, f, longRunning))
	got := func() (v any) {
		defer func() { v = recover() }()
		h.ServeHTTP(httptest.NewRecorder(), get("/api/v1/namespaces/w/pods?watch=true", "u"))
		return nil
	}()
	if got != http.ErrAbortHandler {
		t.Fatalf("ServeHTTP panicked with %v; want the handler's http.ErrAbortHandler", got)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get("/api/v1/namespaces/b/pods", "u"))
	if rec.Code != http.StatusNoContent {
		t.Fatalf("list after the panicked watch: %d; want 204 (the seat released)", rec.Code)
	}
}
