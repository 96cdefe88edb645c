package controllers

import (
	"context"
	"fmt"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// livePLCShares are the nominal shares of the native levels in the cluster, by level name.
func livePLCShares(t testing.TB) map[string]float64 {
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := k8s.List(context.Background(), &plcs); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, plc := range plcs.Items {
		if plc.Spec.Limited != nil {
			out[plc.Name] = float64(ptr.Deref(plc.Spec.Limited.NominalConcurrencyShares, 0))
		}
	}
	return out
}

// waitNativeShares waits until the native levels of the RequestPriorities hold want shares.
func waitNativeShares(t testing.TB, want map[string]int32) {
	t.Helper()
	eventually(t, func() error {
		live := livePLCShares(t)
		for rp, shares := range want {
			if got := live[native.NativeName(rp)]; got != float64(shares) {
				return fmt.Errorf("native level of %s holds %v shares, want %d", rp, got, shares)
			}
		}
		return nil
	})
}

// TestAutopilotOnTheNativeLevels runs the loop (fake metrics, fake clock) against a real
// kube-apiserver and the operator's projection: the native levels get the applied shares
// while spec keeps the configured ones, their sum stays the configured sum, and removing
// spec.autopilot brings Git's shares back at once, before the loop runs again.
func TestAutopilotOnTheNativeLevels(t *testing.T) {
	resetCluster(t)
	// Kube-apiserver's seats are not read: fewer recomputations unrelated to the autopilot.
	// (That a status write of the applied shares itself triggers one is
	// TestSnapshotHandlerSeesAppliedShares: here another trigger may come first.)
	startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNative, AutopilotInterval: -1,
		NativeSeatsPeriod: -1, NativeMaxSeatLossPercent: ptr.To[int32](90), Clock: realClock}})
	for _, rp := range []*flowv1.RequestPriority{pooledRP("grow", 100, 10, 5, 40), pooledRP("give", 200, 30, 5, 40)} {
		create(t, rp)
		waitProjected(t, rp, func() []metav1.Condition { return rp.Status.Conditions })
	}
	waitNativeShares(t, map[string]int32{"grow": 10, "give": 30})

	h := newAutopilotHarnessOn(t, k8s, func() map[string]float64 { return livePLCShares(t) })
	h.pressure()
	h.tick(true)
	h.tick(false)
	h.tick(false)
	grow, give := h.status("grow"), h.status("give")
	if grow.State != flowv1.AutopilotApplied || *grow.AppliedShares <= 10 || *grow.AppliedShares+*give.AppliedShares != 40 {
		t.Fatalf("after three ticks: grow %+v, give %+v; want Applied, grow above 10, 40 in all", grow, give)
	}
	waitNativeShares(t, map[string]int32{"grow": *grow.AppliedShares, "give": *give.AppliedShares})
	if s := *getRP(t, "grow").Spec.AssuredConcurrencyShares; s != 10 {
		t.Errorf("spec.assuredConcurrencyShares of grow is %d, want the configured 10", s)
	}

	updateRP(t, "grow", func(rp *flowv1.RequestPriority) { rp.Spec.Autopilot = nil })
	waitNativeShares(t, map[string]int32{"grow": 10, "give": 30})
	h.tick(false)
	eventually(t, func() error {
		var rp flowv1.RequestPriority
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: "grow"}, &rp); err != nil {
			return err
		}
		if rp.Status.Autopilot != nil {
			return fmt.Errorf("status.autopilot of grow is %+v after spec.autopilot was removed", rp.Status.Autopilot)
		}
		return nil
	})
}
