package dispatch

import (
	"context"
	"testing"
	"time"
)

// TestFinishHandsOverToTheLockHolder: a request that finishes while another goroutine holds
// the lock returns without waiting for it, its seat stays counted until the holder releases
// the lock, and the release applies it.
func TestFinishHandsOverToTheLockHolder(t *testing.T) {
	d := New(nil, Options{ServerConcurrencyLimit: 4})
	inExec, proceed := make(chan struct{}), make(chan struct{})
	done := make(chan Outcome, 1)
	go func() {
		done <- d.Handle(context.Background(), &Request{FlowHash: 7, Width: 2}, func() {
			close(inExec)
			<-proceed
		})
	}()
	<-inExec

	d.lock() // as an admission on another goroutine would
	close(proceed)
	select {
	case o := <-done:
		if o != Executed {
			t.Fatalf("outcome %v, want Executed", o)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the finishing request waited for the lock instead of handing its finish over")
	}
	if d.executing != 2 || d.handover.empty() {
		t.Fatalf("while the lock is held: executing width %d, handed over %v; want 2 and a handed finish",
			d.executing, !d.handover.empty())
	}
	d.unlock()

	if !d.handover.empty() {
		t.Fatal("a handed-over finish is left after the holder released the lock")
	}
	if st := d.Snapshot(); st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Fatalf("after the release: executing width %d, waiting %d; want 0 and 0", st.ExecutingWidth, st.Waiting)
	}
}

// TestHandedFinishDispatchesWaiter: a finish handed over while a request waits for its seat
// dispatches that request when the holder releases the lock.
func TestHandedFinishDispatchesWaiter(t *testing.T) {
	d := New(nil, Options{ServerConcurrencyLimit: 1, WaitLimit: time.Minute})
	inExec, proceed := make(chan struct{}), make(chan struct{})
	first := make(chan Outcome, 1)
	go func() {
		first <- d.Handle(context.Background(), &Request{FlowHash: 1, Width: 1}, func() {
			close(inExec)
			<-proceed
		})
	}()
	<-inExec
	second := make(chan Outcome, 1)
	go func() { second <- d.Handle(context.Background(), &Request{FlowHash: 2, Width: 1}, nil) }()
	waitFor(t, func() bool { return d.Snapshot().Waiting == 1 })

	d.lock()
	close(proceed)
	if o := <-first; o != Executed {
		t.Fatalf("first: %v, want Executed", o)
	}
	if d.waiting != 1 {
		t.Fatalf("the waiter was dispatched before the holder released the lock (waiting %d)", d.waiting)
	}
	d.unlock()
	select {
	case o := <-second:
		if o != Executed {
			t.Fatalf("second: %v, want Executed", o)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter was never dispatched by the handed-over finish")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30 s")
		}
	}
}
