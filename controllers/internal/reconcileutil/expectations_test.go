package reconcileutil

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestExpectations(t *testing.T) {
	obj := func(uid string, gen int64) *flowv1.FlowSchema {
		fs := &flowv1.FlowSchema{}
		fs.UID, fs.Generation = types.UID(uid), gen
		return fs
	}
	clk := testingclock.NewFakePassiveClock(t0.Time)
	e := NewExpectations(time.Minute, clk)
	if e.Wait() != 0 {
		t.Fatal("waiting with nothing pending")
	}
	e.Expect(obj("a", 2))
	if e.Wait() == 0 {
		t.Fatal("not waiting for an unseen write")
	}
	e.Observe(obj("a", 1)) // an older version of the object
	if e.Wait() == 0 {
		t.Fatal("an older generation fulfilled the expectation")
	}
	e.Observe(obj("b", 5)) // another object
	e.Observe(obj("a", 2))
	if e.Wait() != 0 {
		t.Fatal("still waiting after the write was seen")
	}

	// The event may beat the writer: seen before expected.
	e.Observe(obj("c", 1))
	e.Expect(obj("c", 1))
	if e.Wait() != 0 {
		t.Fatal("an event seen before expect was not matched")
	}

	// A write never seen is waited for until the timeout, then given up.
	e.Expect(obj("d", 1))
	clk.SetTime(t0.Add(40 * time.Second))
	if got := e.Wait(); got != 20*time.Second {
		t.Fatalf("wait = %s, want the 20s left", got)
	}
	clk.SetTime(t0.Add(time.Minute))
	if e.Wait() != 0 {
		t.Fatal("an expired expectation still blocks")
	}
}
