package donoharm_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/cli/prune"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/operator"
	"github.com/apf-operator/apf-operator/test/harness"
	"github.com/apf-operator/apf-operator/test/harness/inprocess"
)

// TestInstallDoesNoHarm is the must-show: the before / after install / after
// uninstall table per traffic class, failing when a class changes level or keeps less than
// 100% of its nominal seats after install, or anything differs after uninstall. After install
// the defaults are the proposal's five and five, bound (checkDefaultsBound). The last column is
// the earlier behaviour (the proposal's five defaults unbound and the backstop projected at
// 8999), for the record.
func TestInstallDoesNoHarm(t *testing.T) {
	before := settle(t, "before the operator", noOwnedNatives)

	// As the chart runs it: its own service account known, so its own route is projected too.
	stop := startOperator(t, func(o *operator.Options) { o.Namespace, o.ServiceAccount = "apf-operator-system", "apf-operator" })
	waitDefaultsProjected(t)
	after := settle(t, "after install", ownedNativeFlowSchemas(native.NativeName("system-top"), native.OperatorRouteName))
	checkDefaultsBound(t)
	stop()
	uninstall(t)
	afterUninstall := settle(t, "after uninstall", noOwnedNatives)
	deleteOurs(t) // the CRDs' objects stay after uninstall (crds.keep); the next phase starts afresh

	old := oldBehaviour(t)

	t.Logf("kube-apiserver with --max-requests-inflight=%d --max-mutating-requests-inflight=%d; level and nominal seats per class:\n%s",
		maxRequestsInflight, maxMutatingRequestsInflight, table(
			[]string{"before", "after install", "after uninstall", "earlier defaults (proposal's five, backstop at 8999)"},
			[]measurement{before, after, afterUninstall, old}))
	for _, c := range classes {
		b, a, u := before[c.name], after[c.name], afterUninstall[c.name]
		if a.level != b.level || a.seats < b.seats {
			t.Errorf("%s: level %s with %d nominal seats after install, want level %s with %d (100%%) as before",
				c.name, a.level, a.seats, b.level, b.seats)
		}
		if u != b {
			t.Errorf("%s: %v after uninstall, want %v as before", c.name, u, b)
		}
	}
}

// oldBehaviour installs the earlier configuration (the proposal's defaults as objects of their
// own levels, not bound; the backstop projected with --native-unmatched=operator), measures
// it, and uninstalls it.
func oldBehaviour(t *testing.T) measurement {
	t.Helper()
	for _, rp := range defaults.RequestPriorities() {
		rp.Labels, rp.Annotations, rp.Spec.NativeLevel = nil, nil, ""
		create(t, &rp)
	}
	for _, fs := range defaults.FlowSchemas() {
		fs.Labels, fs.Annotations = nil, harness.ExemptRecordOnly(fs.Annotations)
		create(t, &fs)
	}
	stop := startOperator(t, func(o *operator.Options) {
		o.ManageDefaults, o.NativeUnmatched = false, native.UnmatchedOperator
		o.NativeMaxSeatLossPercent = 90 // the earlier behaviour had no share budget
	})
	m := settle(t, "earlier defaults", ownedNativeFlowSchemas(native.NativeName("system-top"), native.NativeName("system-low"),
		native.NativeName("workload-low"), "apf.non-top-backstop"))
	stop()
	deleteOurs(t)
	uninstall(t)
	settle(t, "after uninstalling the earlier defaults", noOwnedNatives)
	return m
}

// startOperator runs the operator as the chart does, through internal/operator (in-process,
// without leader election or webhooks), with the changes of configure, until the returned
// function is called.
func startOperator(t *testing.T, configure func(*operator.Options)) (stop func()) {
	t.Helper()
	o := inprocess.Options()
	configure(&o)
	_, stop = inprocess.Start(t, restConfig, o)
	return stop
}

// uninstall runs what the chart's post-delete hook runs: apf-operator prune-native.
func uninstall(t *testing.T) {
	t.Helper()
	var out bytes.Buffer
	if err := prune.Prune(context.Background(), k8s, prune.DryRunNone, &out); err != nil {
		t.Fatalf("prune-native: %v\n%s", err, out.String())
	}
	t.Logf("prune-native:\n%s", out.String())
}

// waitDefaultsProjected waits until the defaults exist, are the only objects, every
// RequestPriority and FlowSchema system-top is Projected=True, and the other FlowSchemas are
// withheld (Projected=False, reason ShadowedByNative).
func waitDefaultsProjected(t *testing.T) {
	t.Helper()
	harness.Eventually(t, time.Minute, "the defaults, Projected=True or withheld", defaultsProjected)
}

func defaultsProjected() error {
	rps, fss, err := listDefaults()
	if err != nil {
		return err
	}
	want := defaults.Default()
	if len(rps) != len(want.RequestPriorities()) || len(fss) != len(want.FlowSchemas()) {
		return fmt.Errorf("%d RequestPriorities and %d FlowSchemas, want %d and %d", len(rps), len(fss),
			len(want.RequestPriorities()), len(want.FlowSchemas()))
	}
	for i := range rps {
		if err := harness.ProjectedNow(&rps[i]); err != nil {
			return err
		}
	}
	withheld := defaults.Withheld(fss)
	for i := range fss {
		if _, ok := withheld[fss[i].Name]; !ok {
			if err := harness.ProjectedNow(&fss[i]); err != nil {
				return err
			}
			continue
		}
		c := meta.FindStatusCondition(fss[i].Status.Conditions, flowv1.ConditionProjected)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != flowv1.ReasonShadowedByNative {
			return fmt.Errorf("FlowSchema %s: Projected %+v, want False/%s", fss[i].Name, c, flowv1.ReasonShadowedByNative)
		}
	}
	return nil
}

func listDefaults() ([]flowv1.RequestPriority, []flowv1.FlowSchema, error) {
	var rps flowv1.RequestPriorityList
	var fss flowv1.FlowSchemaList
	if err := k8s.List(context.Background(), &rps); err != nil {
		return nil, nil, err
	}
	if err := k8s.List(context.Background(), &fss); err != nil {
		return nil, nil, err
	}
	return rps.Items, fss.Items, nil
}

// checkDefaultsBound is `kubectl get rp,afs` after a default install, through the client: the
// five RequestPriorities and five FlowSchemas, each RequestPriority with status.nativeName (its
// bound level, exempt for system-top) and status.nativeNominalSeats equal to that level's
// apiserver_flowcontrol_nominal_limit_seats on kube-apiserver's /metrics.
func checkDefaultsBound(t *testing.T) {
	t.Helper()
	rps, fss, err := listDefaults()
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := nominalSeats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, rp := range rps {
		wantLevel := rp.Spec.NativeLevel
		if rp.Spec.PriorityLevel == flowv1.ExemptPriorityLevel {
			wantLevel = "exempt"
		}
		seats, ok := metrics[wantLevel]
		if wantLevel == "exempt" {
			seats, ok = 0, true // the exempt level has no nominal seats to give (status says 0)
		}
		if c := meta.FindStatusCondition(rp.Status.Conditions, flowv1.ConditionProjected); rp.Spec.NativeLevel != "" &&
			(c == nil || c.Reason != flowv1.ReasonBound) {
			t.Errorf("RequestPriority %s: Projected %+v, want reason %s", rp.Name, c, flowv1.ReasonBound)
		}
		got := rp.Status.NativeNominalSeats
		if rp.Status.NativeName != wantLevel || !ok || got == nil || int(*got) != seats {
			t.Errorf("RequestPriority %s: nativeName %q, nativeNominalSeats %v; want %q and %d (kube-apiserver's /metrics)",
				rp.Name, rp.Status.NativeName, got, wantLevel, seats)
		}
		rows = append(rows, fmt.Sprintf("rp/%s level %d nativeLevel %q nativeName %q seats %v", rp.Name, rp.Spec.PriorityLevel,
			rp.Spec.NativeLevel, rp.Status.NativeName, ptrString(got)))
	}
	for _, fs := range fss {
		c := meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionProjected)
		if c == nil {
			t.Errorf("FlowSchema %s has no Projected condition", fs.Name)
			continue
		}
		rows = append(rows, fmt.Sprintf("fs/%s -> %s Projected=%s/%s nativeName %q", fs.Name, fs.Spec.RequestPriority.Name,
			c.Status, c.Reason, fs.Status.NativeName))
	}
	if len(rps) != 5 || len(fss) != 5 {
		t.Errorf("%d RequestPriorities and %d FlowSchemas after install, want 5 and 5", len(rps), len(fss))
	}
	t.Logf("after a default install (kubectl get rp,afs):\n%s", strings.Join(rows, "\n"))
}

func ptrString(p *int32) string {
	if p == nil {
		return "<unset>"
	}
	return fmt.Sprint(*p)
}

// noOwnedNatives accepts a measurement once no native object carries the operator's label.
func noOwnedNatives(measurement) error {
	return ownedNativeFlowSchemas()(nil)
}

// ownedNativeFlowSchemas accepts a measurement once the operator's native FlowSchemas include
// names (and kube-apiserver has digested them, which settle's repeats show); with no names,
// once the operator owns no native object.
func ownedNativeFlowSchemas(names ...string) func(measurement) error {
	return func(measurement) error {
		owned := client.MatchingLabels{flowv1.LabelManagedBy: flowv1.ManagedByValue}
		var fss flowcontrolv1.FlowSchemaList
		if err := k8s.List(context.Background(), &fss, owned); err != nil {
			return err
		}
		got := map[string]bool{}
		for _, fs := range fss.Items {
			got[fs.Name] = true
		}
		for _, n := range names {
			if !got[n] {
				return fmt.Errorf("native FlowSchema %s not there yet (owned: %v)", n, got)
			}
		}
		if len(names) == 0 {
			if len(got) > 0 {
				return fmt.Errorf("owned native FlowSchemas left: %v", got)
			}
			var plcs flowcontrolv1.PriorityLevelConfigurationList
			if err := k8s.List(context.Background(), &plcs, owned); err != nil {
				return err
			}
			if len(plcs.Items) > 0 {
				return fmt.Errorf("%d owned native levels left", len(plcs.Items))
			}
		}
		return nil
	}
}

// create creates obj as the admin.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// deleteOurs deletes every RequestPriority and FlowSchema and waits until they are gone.
func deleteOurs(t *testing.T) {
	t.Helper()
	for _, obj := range []client.Object{&flowv1.FlowSchema{}, &flowv1.RequestPriority{}} {
		if err := k8s.DeleteAllOf(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var rps flowv1.RequestPriorityList
		var fss flowv1.FlowSchemaList
		if k8s.List(context.Background(), &rps) == nil && k8s.List(context.Background(), &fss) == nil &&
			len(rps.Items)+len(fss.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("our objects were not deleted in 1m")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
