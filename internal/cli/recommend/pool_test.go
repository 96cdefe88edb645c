package recommend

import (
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apfmetrics"
	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/internal/manifest"
)

func ptr(v int32) *int32 { return &v }

// TestLevelsFromManifests checks the offline mapping: native names as the projection gives
// them, Git's shares in force, spec.autopilot's bounds or the unbounded default, and the
// RequestPriorities that cannot be in the pool skipped with a reason.
func TestLevelsFromManifests(t *testing.T) {
	rps, err := manifest.LoadRequestPriorities([]string{"testdata/manifests"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	levels, skipped := levelsFromManifests(rps)
	got := map[string]autopilot.Level{}
	for _, l := range levels {
		got[l.Object] = l
	}
	want := map[string]autopilot.Level{
		"batch": {Name: "apf-batch", Object: "batch", Shares: 20, ConfiguredShares: 20, BorrowingLimitPercent: ptr(20),
			Bounds: autopilot.Bounds{MinShares: 10, MaxShares: 40, MaxStepPercent: 50}},
		"web":      {Name: "apf-web", Object: "web", Shares: 40, ConfiguredShares: 40, Bounds: autopilot.Bounds{MinShares: 1, MaxStepPercent: unboundedStepPercent}},
		"reports":  {Name: "apf-reports", Object: "reports", Shares: 20, ConfiguredShares: 20, Bounds: autopilot.Bounds{MinShares: 1, MaxStepPercent: unboundedStepPercent}},
		"newcomer": {Name: "apf-newcomer", Object: "newcomer", Shares: 5, ConfiguredShares: 5, Bounds: autopilot.Bounds{MinShares: 1, MaxStepPercent: unboundedStepPercent}},
	}
	if len(got) != len(want) {
		t.Fatalf("levels %v, want those of %v", got, want)
	}
	for name, w := range want {
		g := got[name]
		if g.Name != w.Name || g.Shares != w.Shares || g.ConfiguredShares != w.ConfiguredShares || g.Bounds != w.Bounds ||
			percent(g.BorrowingLimitPercent) != percent(w.BorrowingLimitPercent) || g.LendablePercent != w.LendablePercent {
			t.Errorf("%s: %+v, want %+v", name, g, w)
		}
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Object] = s.Reason
	}
	if !strings.Contains(reasons["admins"], "exempt") || !strings.Contains(reasons["best-effort"], "assuredConcurrencyShares 0") || len(reasons) != 2 {
		t.Errorf("skipped %v, want admins (exempt) and best-effort (0 shares)", reasons)
	}
	loc := map[string]int{}
	for _, rp := range rps {
		loc[rp.Name] = rp.Line
	}
	if loc["batch"] != 9 || loc["web"] != 25 || loc["admins"] != 6 {
		t.Errorf("lines %v: want batch 9 and web 25 (their assuredConcurrencyShares), admins 6 (its spec)", loc)
	}
}

// TestApiDefaultStep checks that spec.autopilot without maxStepPercent bounds a step by the API's
// default, 25%.
func TestApiDefaultStep(t *testing.T) {
	b := bounds(&flowv1.RequestPrioritySpec{Autopilot: &flowv1.RequestPriorityAutopilot{MinShares: 2, MaxShares: 9}})
	if b != (autopilot.Bounds{MinShares: 2, MaxShares: 9, MaxStepPercent: 25}) {
		t.Errorf("bounds %+v", b)
	}
}

// TestClusterLevel checks the live mapping: the native object's shares, lendable and borrowing
// are today's; Git's shares are the configured ones; every way of not being projected is a
// reason, never a crash.
func TestClusterLevel(t *testing.T) {
	rp := func(name, nativeName string) flowv1.RequestPriority {
		return flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:   flowv1.RequestPrioritySpec{PriorityLevel: 10, AssuredConcurrencyShares: ptr(30), QueuesPerWidth: ptr(1), QueueLengthLimit: ptr(10)},
			Status: flowv1.RequestPriorityStatus{NativeName: nativeName}}
	}
	plc := func(name, source string, limited *flowcontrolv1.LimitedPriorityLevelConfiguration) flowcontrolv1.PriorityLevelConfiguration {
		return flowcontrolv1.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue},
				Annotations: map[string]string{flowv1.AnnotationSource: source}},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: limited}}
	}
	limited := &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr(36), LendablePercent: ptr(10), BorrowingLimitPercent: ptr(50)}
	rps := []flowv1.RequestPriority{rp("a", "apf-a"), rp("b", ""), rp("c", "apf-c"), rp("d", "apf-d"), rp("e", "apf-e")}
	plcs := []flowcontrolv1.PriorityLevelConfiguration{
		plc("apf-a", "RequestPriority/a", limited), plc("apf-d", "RequestPriority/other", limited), plc("apf-e", "RequestPriority/e", nil)}
	levels, skipped := levelsFromCluster(rps, plcs)
	if len(levels) != 1 || levels[0].Name != "apf-a" || levels[0].Shares != 36 || levels[0].ConfiguredShares != 30 ||
		levels[0].LendablePercent != 10 || percent(levels[0].BorrowingLimitPercent) != "50" {
		t.Errorf("levels %+v: want apf-a at 36 shares in force (30 in Git), lendable 10, borrowing 50", levels)
	}
	want := map[string]string{"b": "status.nativeName is empty", "c": "not found", "d": "not the operator's projection", "e": "not a Limited level"}
	for _, s := range skipped {
		if !strings.Contains(s.Reason, want[s.Object]) || want[s.Object] == "" {
			t.Errorf("%s skipped: %q, want it to say %q", s.Object, s.Reason, want[s.Object])
		}
		delete(want, s.Object)
	}
	if len(want) > 0 {
		t.Errorf("not skipped: %v", want)
	}
}

// TestWithDemand checks that a level without demand series in either read is skipped, not
// left to make the window incomplete.
func TestWithDemand(t *testing.T) {
	d := &apfmetrics.LevelDemand{}
	prev := &apfmetrics.Snapshot{Demand: map[string]*apfmetrics.LevelDemand{"x": d, "y": d}}
	cur := &apfmetrics.Snapshot{Demand: map[string]*apfmetrics.LevelDemand{"x": d, "z": d}}
	kept, skipped := withDemand([]autopilot.Level{{Name: "x", Object: "rx"}, {Name: "y", Object: "ry"}, {Name: "z", Object: "rz"}}, prev, cur)
	if len(kept) != 1 || kept[0].Name != "x" || len(skipped) != 2 || skipped[0].Object != "ry" || skipped[1].Object != "rz" {
		t.Errorf("kept %v, skipped %v: want x kept, ry and rz skipped", kept, skipped)
	}
	if err := requireDemand(&apfmetrics.Snapshot{}, cur); err == nil || !strings.Contains(err.Error(), "1.29") {
		t.Errorf("no demand at all: %v, want an error naming the kube-apiserver versions", err)
	}
}
