package scale

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

var (
	rpCount      = flag.Int("scale.rps", 100, "RequestPriority objects to apply")
	fsCount      = flag.Int("scale.fss", 1000, "FlowSchema objects to apply")
	appliers     = flag.Int("scale.appliers", 16, "concurrent clients applying the objects")
	converge     = flag.Duration("scale.timeout", 5*time.Minute, "how long the objects may take to converge")
	checkWrites  = flag.Bool("scale.check-writes", true, "fail when an object had more writes than allowedWrites")
	operatorMode = flag.String("scale.operator", "inprocess", "how the operator runs: inprocess (every webhook "+
		"request timed; heap and RSS are the test process's) or process (the built binary: heap, RSS and webhook "+
		"latency are its own, the latency from its native histogram)")
	maxWrites = flag.Int("scale.max-writes", 2, "most operator writes (status and native) allowed per object, "+
		"when the apply is seen in one snapshot")
)

// nativeCapacity is how many distinct matching priorities the projection can give native
// matching precedences (docs/enforcement.md): the FlowSchemas of the rest report
// PrecedenceExhausted. The load's 97 fit, so every FlowSchema is projected.
const nativeCapacity = native.MaxPrecedence - native.MinPrecedence

// TestScale applies the load at once, through the webhook, and checks that every object
// converges (status current and Ready, projection done as far as native precedences allow)
// with at most -scale.max-writes operator writes per object (allowedWrites); it reports the
// figures. Time, memory and latency are reported beside their goals, not asserted: they
// depend on the machine's load (docs/scale.md).
func TestScale(t *testing.T) {
	ctx := context.Background()
	env, err := startEnvironment(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.env.Stop() })
	op, err := env.start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = op.stop()
		}
	})
	admin, err := env.adminClient()
	if err != nil {
		t.Fatal(err)
	}
	l := load{rps: *rpCount, fss: *fsCount}
	order := l.order(1)

	loadBefore := loadAverage()
	start := time.Now()
	prof := op.profile(ctx)
	if err := apply(ctx, admin, l, order, *appliers); err != nil {
		t.Fatal(err)
	}
	applied := time.Since(start)
	split, _, err := op.snapshots() // computed before the apply ended: each splits the burst
	if err != nil {
		t.Fatal(err)
	}
	if err := waitConverged(ctx, admin, l, *converge); err != nil {
		t.Fatalf("not converged %s after the apply began: %v", *converge, err)
	}
	converged := time.Since(start)
	loadAfter := loadAverage()
	heap, rss, err := op.memory()
	if err != nil {
		t.Fatal(err)
	}
	eventReasons, err := eventsByReason(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	// Writes made after convergence (there should be none) reach the log before the barrier's.
	passBarrier(ctx, t, admin, env.auditLog, op.wrote)
	counts, err := countWrites(env.auditLog, op.wrote)
	if err != nil {
		t.Fatal(err)
	}
	withoutBarrier(t, counts)
	w := perObject(l, counts)
	snapshots, computing, err := op.snapshots()
	if err != nil {
		t.Fatal(err)
	}
	if limit := uint64(len(order) / 10); snapshots > limit {
		t.Errorf("%d snapshots computed for %d objects, want at most %d: changes are not coalesced", snapshots, len(order), limit)
	}
	lat, err := op.latency()
	if err != nil {
		t.Fatal(err)
	}
	if lat.requests < len(order) {
		t.Errorf("the webhook served %d requests for %d creations: not every object went through it", lat.requests, len(order))
	}
	if err := prof.wait(); err != nil {
		t.Errorf("CPU profile: %v", err)
	}
	if err := keepEvidence(env.auditLog, op, start); err != nil {
		t.Error(err)
	}
	stopped = true
	if err := op.stop(); err != nil {
		t.Errorf("operator: %v", err)
	}
	if len(counts.other) > 0 {
		t.Errorf("unexpected operator writes: %v", counts.other)
	}
	if over := w.over(allowedWrites(split)); len(over) > 0 && *checkWrites {
		t.Errorf("%d objects had more than %d operator writes (status+native) for an apply of %s seen in %d snapshot(s) "+
			"before it ended, e.g. %v", len(over), allowedWrites(split), applied.Round(time.Second), split, over[:min(len(over), 10)])
	}
	lastWrite := counts.last.Sub(start)
	if counts.last.IsZero() || lastWrite > converged {
		t.Errorf("the audit log's last operator write at %s after the start, the poll saw convergence at %s: "+
			"the log or the clock is wrong", lastWrite, converged)
	}
	report(os.Stdout, figures{load: l, applied: applied, converged: lastWrite, polled: converged, writes: w, counts: counts,
		snapshots: snapshots, computing: computing, machineLoad: loadBefore + " / " + loadAfter, heap: heap, rss: rss,
		measured: op.measured(), latency: lat, eventReasons: eventReasons})
}

// start starts the operator as -scale.operator says.
func (e *environment) start(ctx context.Context, dir string) (operatorUnderTest, error) {
	switch *operatorMode {
	case "inprocess":
		return e.startOperator(ctx)
	case "process":
		return e.startProcessOperator(ctx, dir)
	}
	return nil, fmt.Errorf("-scale.operator=%q: use inprocess or process", *operatorMode)
}

// allowedWrites is -scale.max-writes, plus one for each snapshot the operator computed before
// the apply ended. A burst seen in one snapshot gets at most -scale.max-writes per object; an
// apply that pauses for the operator's quiet time (a loaded machine) or outlasts its longest
// wait is seen in several snapshots, and each may rightly rewrite a status (a
// RequestPriority's count of FlowSchemas) or a native precedence.
func allowedWrites(split uint64) int {
	return *maxWrites + int(split)
}

// apply creates the objects of l in order with n concurrent clients, as a GitOps sync of one
// directory.
func apply(ctx context.Context, c client.Client, l load, order []int, n int) error {
	var g errgroup.Group
	g.SetLimit(n)
	for _, i := range order {
		g.Go(func() error {
			obj := l.object(i)
			if err := c.Create(ctx, obj); err != nil {
				return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// waitConverged polls the API server until the load has converged or timeout passes. Each
// poll first checks the statuses alone, stopping at the first not current (usually in the
// first page), and lists the native objects for the full check only once they all are: the
// checker should weigh little on the kube-apiserver it measures.
func waitConverged(ctx context.Context, c client.Client, l load, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := checkStatuses(ctx, c)
		if err == nil {
			err = checkConverged(ctx, c, l)
		}
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Second)
	}
}

// checkConverged checks every object's status against its generation and the native objects
// their status names; it reads in pages, so that the check weighs little on the measured heap.
func checkConverged(ctx context.Context, c client.Client, l load) error {
	plcs, err := ownedNames(ctx, c, &flowcontrolPLCList{})
	if err != nil {
		return err
	}
	nfss, err := ownedNames(ctx, c, &flowcontrolFSList{})
	if err != nil {
		return err
	}
	rps, err := eachPage(ctx, c, &flowv1.RequestPriorityList{}, func(list client.ObjectList) error {
		for _, rp := range list.(*flowv1.RequestPriorityList).Items {
			if err := current(rp.Name, rp.Generation, rp.Status.ObservedGeneration, rp.Status.Conditions); err != nil {
				return err
			}
			if !plcs[rp.Status.NativeName] {
				return fmt.Errorf("RequestPriority %s: native level %q missing", rp.Name, rp.Status.NativeName)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	projected, exhausted := 0, 0
	fss, err := eachPage(ctx, c, &flowv1.FlowSchemaList{}, func(list client.ObjectList) error {
		for _, fs := range list.(*flowv1.FlowSchemaList).Items {
			if err := current(fs.Name, fs.Generation, fs.Status.ObservedGeneration, fs.Status.Conditions); err != nil {
				return err
			}
			p := meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionProjected)
			switch {
			case p.Status == metav1.ConditionTrue && nfss[fs.Status.NativeName]:
				projected++
			case p.Reason == flowv1.ReasonPrecedenceExhausted:
				exhausted++
			default:
				return fmt.Errorf("FlowSchema %s: Projected %s (%s), native %q present: %t", fs.Name, p.Status, p.Reason,
					fs.Status.NativeName, nfss[fs.Status.NativeName])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if rps != l.rps || fss != l.fss {
		return fmt.Errorf("%d RequestPriorities and %d FlowSchemas stored, want %d and %d", rps, fss, l.rps, l.fss)
	}
	if want := l.projectable(); projected != want || exhausted != l.fss-want {
		return fmt.Errorf("%d FlowSchemas projected and %d PrecedenceExhausted, want %d and %d", projected, exhausted,
			want, l.fss-want)
	}
	return nil
}

// checkStatuses checks that every object's status is current (current), reading in pages
// and stopping at the first that is not.
func checkStatuses(ctx context.Context, c client.Client) error {
	if _, err := eachPage(ctx, c, &flowv1.RequestPriorityList{}, func(list client.ObjectList) error {
		for _, rp := range list.(*flowv1.RequestPriorityList).Items {
			if err := current(rp.Name, rp.Generation, rp.Status.ObservedGeneration, rp.Status.Conditions); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	_, err := eachPage(ctx, c, &flowv1.FlowSchemaList{}, func(list client.ObjectList) error {
		for _, fs := range list.(*flowv1.FlowSchemaList).Items {
			if err := current(fs.Name, fs.Generation, fs.Status.ObservedGeneration, fs.Status.Conditions); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// current checks that a status is of the object's generation, Ready, and decided about its
// projection.
func current(name string, generation, observed int64, conds []metav1.Condition) error {
	ready := meta.FindStatusCondition(conds, flowv1.ConditionReady)
	projected := meta.FindStatusCondition(conds, flowv1.ConditionProjected)
	switch {
	case observed != generation || ready == nil || ready.ObservedGeneration != generation:
		return fmt.Errorf("%s: status of generation %d, object at %d", name, observed, generation)
	case ready.Status != metav1.ConditionTrue:
		return fmt.Errorf("%s: Ready %s (%s): %s", name, ready.Status, ready.Reason, ready.Message)
	case projected == nil || projected.ObservedGeneration != generation || projected.Reason == flowv1.ReasonPending:
		return fmt.Errorf("%s: projection not decided: %+v", name, projected)
	}
	return nil
}
