package apf_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

func TestEngineDefaults(t *testing.T) {
	e := apf.NewEngine(effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas()),
		dispatch.Options{ServerConcurrencyLimit: 10})
	cases := []struct {
		name             string
		user             string
		groups           []string
		method, path     string
		schema, priority string
	}{
		{"node heartbeat", "system:node:n1", []string{"system:nodes"}, "PATCH", "/api/v1/nodes/n1/status", "system-high", "system-high"},
		{"garbage collector", "system:controller:garbage-collector", nil, "DELETE", "/api/v1/namespaces/a/pods/p", "system-low", "system-low"},
		{"kubectl", "alice", nil, "GET", "/api/v1/namespaces/a/pods", "workload-high", "workload-high"},
		{"service account", "system:serviceaccount:a:b", nil, "GET", "/api/v1/namespaces/a/pods", "workload-low", "workload-low"},
		{"masters (exempt)", "admin", []string{"system:masters"}, "GET", "/healthz", "system-top", "system-top"},
		{"non-resource", "alice", nil, "GET", "/healthz", "non-top-backstop", "workload-low"},
	}
	for _, c := range cases {
		runs := 0
		r, o := e.Handle(context.Background(), attrs(c.user, c.groups, c.method, c.path), func() { runs++ })
		if o != dispatch.Executed || runs != 1 {
			t.Errorf("%s: outcome %v, exec ran %d times; want Executed once", c.name, o, runs)
		}
		if r.Schema.Name != c.schema || r.Schema.Priority.Name != c.priority {
			t.Errorf("%s: classified to %s/%s, want %s/%s", c.name, r.Schema.Name, r.Schema.Priority.Name, c.schema, c.priority)
		}
	}
	if st := e.State(); st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Errorf("after all requests finished: executing %d, waiting %d; want 0, 0", st.ExecutingWidth, st.Waiting)
	}
}

// blocker runs a request whose exec blocks until release is closed.
type blocker struct {
	started, done chan struct{}
	release       chan struct{}
	outcome       dispatch.Outcome
	result        apf.Result
}

func startBlocked(e *apf.Engine, ctx context.Context, user, method, path string) *blocker {
	b := &blocker{started: make(chan struct{}), done: make(chan struct{}), release: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.result, b.outcome = e.Handle(ctx, attrs(user, nil, method, path), func() {
			close(b.started)
			<-b.release
		})
	}()
	return b
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

func TestEngineQueueFullAndLongRunningBypass(t *testing.T) {
	e := apf.NewEngine(oneQueueConfig("only"), dispatch.Options{ServerConcurrencyLimit: 1})
	ctx := context.Background()

	running := startBlocked(e, ctx, "u", "GET", "/api/v1/namespaces/a/pods")
	<-running.started
	waiting := startBlocked(e, ctx, "u", "GET", "/api/v1/namespaces/a/pods")
	waitFor(t, "the second request to queue", func() bool { return e.State().Waiting == 1 })

	ran := false
	r, o := e.Handle(ctx, attrs("u", nil, "GET", "/api/v1/namespaces/a/pods"), func() { ran = true })
	if o != dispatch.RejectedQueueFull || ran {
		t.Fatalf("third request: outcome %v, exec ran %v; want RejectedQueueFull without exec", o, ran)
	}
	if r.Schema.Name != "users" || r.Schema.Priority.Name != "only" {
		t.Errorf("a rejected request is still classified: got %s/%s", r.Schema.Name, r.Schema.Priority.Name)
	}

	// A watch of the same flow runs at once although its level is full, and is not counted.
	var width int
	r, o = e.Handle(ctx, attrs("u", nil, "GET", "/api/v1/namespaces/a/pods?watch=true"), func() {
		width = e.State().ExecutingWidth
	})
	if o != dispatch.Executed || !r.LongRunning || r.Schema.Name != "users" {
		t.Fatalf("watch: outcome %v, long-running %v, schema %s; want Executed, true, users", o, r.LongRunning, r.Schema.Name)
	}
	if width != 1 {
		t.Errorf("executing width while the watch ran = %d; want 1 (the blocked request only)", width)
	}

	close(running.release)
	<-waiting.started
	close(waiting.release)
	<-running.done
	<-waiting.done
	if running.outcome != dispatch.Executed || waiting.outcome != dispatch.Executed {
		t.Errorf("outcomes %v, %v; want Executed twice", running.outcome, waiting.outcome)
	}
}

func TestEngineUpdateInFlight(t *testing.T) {
	e := apf.NewEngine(oneQueueConfig("old-level"), dispatch.Options{ServerConcurrencyLimit: 1})
	ctx := context.Background()
	running := startBlocked(e, ctx, "u", "GET", "/api/v1/namespaces/a/pods")
	<-running.started
	waiting := startBlocked(e, ctx, "u", "GET", "/api/v1/namespaces/a/pods")
	waitFor(t, "the second request to queue", func() bool { return e.State().Waiting == 1 })

	// The new configuration renames the level and the schema's priority.
	e.Update(oneQueueConfig("new-level"))
	if got := e.Config().Schemas[0].Priority.Name; got != "new-level" {
		t.Fatalf("Config() after Update names priority %q, want new-level", got)
	}
	var r apf.Result
	e.Classify(attrs("u", nil, "GET", "/api/v1/namespaces/a/pods"), &r)
	if r.Schema.Priority.Name != "new-level" {
		t.Errorf("a new request classifies to %q, want new-level", r.Schema.Priority.Name)
	}

	close(running.release)
	<-waiting.started
	close(waiting.release)
	<-running.done
	<-waiting.done
	if running.outcome != dispatch.Executed || waiting.outcome != dispatch.Executed {
		t.Errorf("requests classified before the update: %v, %v; want Executed twice", running.outcome, waiting.outcome)
	}
	if running.result.Schema.Priority.Name != "old-level" {
		t.Errorf("the running request keeps its classification, got %q", running.result.Schema.Priority.Name)
	}
	if st := e.State(); st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Errorf("after the update drained: executing %d, waiting %d; want 0, 0", st.ExecutingWidth, st.Waiting)
	}
	e.Update(nil) // ignored
	if e.Config().Schemas[0].Priority.Name != "new-level" {
		t.Error("Update(nil) changed the configuration")
	}
}

// TestEngineConcurrentRequestsAndUpdates: under concurrent updates and cancellations every
// request ends exactly once, exec runs exactly for the executed ones, and no seat leaks.
func TestEngineConcurrentRequestsAndUpdates(t *testing.T) {
	configs := []*effective.Config{oneQueueConfig("a"), oneQueueConfig("b"),
		effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas()), nil}
	e := apf.NewEngine(configs[0], dispatch.Options{ServerConcurrencyLimit: 3, WaitLimit: 20 * time.Millisecond})
	var executed, execs, rejected atomic.Int64
	stop := make(chan struct{})
	var updates sync.WaitGroup
	updates.Add(1)
	go func() {
		defer updates.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			e.Update(configs[i%len(configs)])
			time.Sleep(100 * time.Microsecond)
		}
	}()
	users := []string{"u", "alice", "system:serviceaccount:a:b", "system:node:n1"}
	var wg sync.WaitGroup
	const workers, perWorker = 16, 150
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				if i%7 == 0 {
					time.AfterFunc(50*time.Microsecond, cancel)
				}
				a := attrs(users[(w+i)%len(users)], nil, []string{"GET", "PUT"}[i%2], "/api/v1/namespaces/a/pods/p")
				_, o := e.Handle(ctx, a, func() { execs.Add(1); time.Sleep(20 * time.Microsecond) })
				if o == dispatch.Executed {
					executed.Add(1)
				} else {
					rejected.Add(1)
				}
				cancel()
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	updates.Wait()
	if total := executed.Load() + rejected.Load(); total != workers*perWorker {
		t.Fatalf("%d outcomes for %d requests", total, workers*perWorker)
	}
	if execs.Load() != executed.Load() {
		t.Fatalf("exec ran %d times for %d executed requests", execs.Load(), executed.Load())
	}
	if st := e.State(); st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Fatalf("seat leak: executing %d, waiting %d after every request ended", st.ExecutingWidth, st.Waiting)
	}
	t.Logf("executed %d, rejected %d", executed.Load(), rejected.Load())
}

func TestEngineHandleAllocatesNothing(t *testing.T) {
	e := apf.NewEngine(effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas()),
		dispatch.Options{ServerConcurrencyLimit: 600})
	a := attrs("alice", []string{"system:authenticated"}, "GET", "/api/v1/namespaces/team-a/pods")
	ctx := context.Background()
	exec := func() {}
	var r apf.Result
	if n := testing.AllocsPerRun(1000, func() { e.HandleInto(ctx, a, &r, exec) }); n != 0 {
		t.Fatalf("HandleInto allocates %.2f times per request; want 0", n)
	}
}
