package dispatch_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch/dispatchtest"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

func TestOutcomeNames(t *testing.T) {
	for o, want := range map[dispatch.Outcome][2]string{
		dispatch.Executed:          {"Executed", ""},
		dispatch.RejectedQueueFull: {"RejectedQueueFull", "queue-full"},
		dispatch.RejectedTimeout:   {"RejectedTimeout", "timeout"},
		dispatch.RejectedCancelled: {"RejectedCancelled", "cancelled"},
	} {
		if o.String() != want[0] || o.Reason() != want[1] || o.Rejected() != (want[1] != "") {
			t.Errorf("%d: %q %q %v, want %q %q", o, o.String(), o.Reason(), o.Rejected(), want[0], want[1])
		}
	}
}

// TestSnapshotJSON: the debug dump serialises, lists every level with its ACV, its borrowing
// bounds and only the non-empty queues.
func TestSnapshotJSON(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 64, hand: 4, limit: 10, lend: ptr(100), borrow: ptr(200)})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 1})
	l := schema(t, cfg, "l")
	h.submit(l, 7, 1, "run")
	h.submit(l, 9, 1, "wait")
	out, err := json.Marshal(h.d.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var st dispatch.State
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatal(err)
	}
	lv := levelState(t, st, "l")
	if st.ServerConcurrencyLimit != 1 || st.Waiting != 1 || lv.AssuredConcurrency != 1 || len(lv.Queues) != 2 ||
		lv.MinConcurrency != 0 || lv.MaxConcurrency != 3 {
		t.Fatalf("snapshot %s", out)
	}
	for _, q := range lv.Queues {
		if q.Width != 1 || q.Length+q.Executing != 1 {
			t.Fatalf("queue %+v in %s", q, out)
		}
	}
	if ex := levelState(t, st, "system-top"); !ex.Exempt {
		t.Fatalf("exempt level %+v", ex)
	}
	for _, field := range []string{`"serverConcurrencyLimit"`, `"assuredConcurrency"`, `"minConcurrency"`, `"maxConcurrency"`,
		`"virtualStartSeconds"`, `"executing"`} {
		if !strings.Contains(string(out), field) {
			t.Errorf("snapshot lacks %s: %s", field, out)
		}
	}
}

// TestBadInputDoesNotCrash: a nil schema, a schema without a level, odd widths, a nil exec and
// a zero limit are all served.
func TestBadInputDoesNotCrash(t *testing.T) {
	d := dispatch.New(nil, dispatch.Options{}) // backstop configuration, SCL 1
	ctx := context.Background()
	for _, r := range []*dispatch.Request{
		{Schema: nil, Width: 0},
		{Schema: &effective.Schema{Name: "orphan"}, Width: 7},
		{Schema: &effective.Schema{Name: "gone", Priority: &effective.Priority{Name: "gone", Level: 5}}, Width: -1},
	} {
		ran := false
		if out := d.Handle(ctx, r, func() { ran = true }); out != dispatch.Executed || !ran {
			t.Fatalf("%+v: %v, ran %v", r, out, ran)
		}
	}
	if out := d.Handle(ctx, &dispatch.Request{Width: 1}, nil); out != dispatch.Executed {
		t.Fatalf("nil exec: %v", out)
	}
	d.Update(nil)
	d.Update(&effective.Config{})
	if st := d.Snapshot(); st.ServerConcurrencyLimit != 1 || len(st.Levels) != 2 || st.ExecutingWidth != 0 {
		t.Fatalf("snapshot %+v", st)
	}
}

// TestPanicReleasesSeat: a panicking exec propagates its panic and frees its seats.
func TestPanicReleasesSeat(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 1, limit: 10})
	d := dispatch.New(cfg, dispatch.Options{ServerConcurrencyLimit: 2})
	func() {
		defer func() {
			if recover() != "boom" {
				t.Fatal("panic not propagated")
			}
		}()
		d.Handle(context.Background(), &dispatch.Request{Schema: schema(t, cfg, "l"), Width: 2}, func() { panic("boom") })
	}()
	if st := d.Snapshot(); st.ExecutingWidth != 0 {
		t.Fatalf("executing width %d after a panic, want 0", st.ExecutingWidth)
	}
}

func TestFakeClockRunsDueTimersInOrder(t *testing.T) {
	c := dispatchtest.NewFakeClock(epoch)
	var fired []string
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s") })
	c.AfterFunc(time.Second, func() { fired = append(fired, "1s:"+c.Now().Sub(epoch).String()) })
	stopped := c.AfterFunc(time.Second, func() { fired = append(fired, "stopped") })
	if !stopped.Stop() || c.ArmedTimers() != 2 {
		t.Fatalf("Stop or ArmedTimers wrong: %d armed", c.ArmedTimers())
	}
	c.Step(time.Second - 1)
	if len(fired) != 0 {
		t.Fatalf("fired early: %v", fired)
	}
	c.Step(5 * time.Second)
	if strings.Join(fired, ",") != "1s:5.999999999s,2s" {
		t.Fatalf("fired %v", fired)
	}
	reset := c.AfterFunc(time.Hour, func() { fired = append(fired, "reset") })
	reset.Reset(time.Second)
	c.Step(time.Second)
	if fired[len(fired)-1] != "reset" || c.ArmedTimers() != 0 {
		t.Fatalf("fired %v, %d armed", fired, c.ArmedTimers())
	}
}
