package apf_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch/dispatchtest"
	"github.com/apf-operator/apf-operator/pkg/apf"
)

// fakeClock presents the engine's fake clock as an apf.Clock, as an embedder's own fake would.
type fakeClock struct{ *dispatchtest.FakeClock }

func (c fakeClock) AfterFunc(d time.Duration, f func()) apf.Timer { return c.FakeClock.AfterFunc(d, f) }

// TestRequestTimeoutSetsWaitLimit: with Options.Clock a fake, a queued request is rejected
// with reason timeout exactly when a quarter of Options.RequestTimeout has passed.
func TestRequestTimeoutSetsWaitLimit(t *testing.T) {
	clock := fakeClock{dispatchtest.NewFakeClock(time.Unix(0, 0))}
	f := tinyFilter(t, apf.Options{Clock: clock, RequestTimeout: 40 * time.Second}) // wait limit 10s
	a := apf.Attributes{User: "u", Verb: "get", Resource: "pods", Namespace: "a", ResourceRequest: true}
	entered, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- f.Serve(context.Background(), &a, func(apf.Classification) { close(entered); <-release })
	}()
	<-entered
	queued := make(chan error, 1)
	go func() { queued <- f.Serve(context.Background(), &a, nil) }()
	waitFor(t, "the timer of the queued request", func() bool { return clock.ArmedTimers() > 0 })

	clock.Step(9 * time.Second)
	select {
	case err := <-queued:
		t.Fatalf("the queued request ended after 9s of a 10s wait limit: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	clock.Step(time.Second)
	var rejected *apf.RejectedError
	if err := <-queued; !errors.As(err, &rejected) || rejected.Reason != apf.ReasonTimeout {
		t.Errorf("after 10s: %v; want a rejection with reason timeout", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first request: %v", err)
	}
}
