package native_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// keptLevels are kube-apiserver's levels that must keep 90% of their nominal seats.
var keptLevels = []string{"system", "node-high", "leader-election", "workload-high", "exempt"}

// TestShareBudgetKeepsNativeSeats: on kube-apiserver with a concurrency limit of 150 seats, the
// operator reads the limit from /metrics, so its budget also counts kube-apiserver's rounding:
// 27 shares would leave leader-election 6 of its 7 seats, so a RequestPriority of 27 shares is
// not projected (OverBudget, in seats) while one of 4 shares is. The kept levels'
// apiserver_flowcontrol_nominal_limit_seats stay at 90% or more of their values without the
// operator's levels, and the projected RequestPriority's status.nativeNominalSeats is its
// native level's metric.
func TestShareBudgetKeepsNativeSeats(t *testing.T) {
	resetCluster(t)
	ctx := context.Background()
	// Without any level of the operator's, as before an install.
	if err := k8s.DeleteAllOf(ctx, &flowcontrolv1.FlowSchema{}, client.MatchingLabels{flowv1.LabelManagedBy: flowv1.ManagedByValue}); err != nil {
		t.Fatal(err)
	}
	if err := k8s.DeleteAllOf(ctx, &flowcontrolv1.PriorityLevelConfiguration{}, client.MatchingLabels{flowv1.LabelManagedBy: flowv1.ManagedByValue}); err != nil {
		t.Fatal(err)
	}
	before := map[string]float64{}
	harness.Eventually(t, waitTimeout, "the check in TestShareBudgetKeepsNativeSeats", func() error {
		for _, l := range keptLevels {
			before[l], _ = scrapeMetric(t, "apiserver_flowcontrol_nominal_limit_seats", "priority_level", l)
		}
		sum, levels, err := nominalSum()
		if err != nil {
			return err
		}
		if sum > maxRequestsInflight+maxMutatingRequestsInflight+10 {
			return fmt.Errorf("kube-apiserver still counts the operator's levels: %v seats in all (%s)", sum, levels)
		}
		if before["leader-election"] != 7 || before["system"] != 19 {
			return fmt.Errorf("seats before %v, want leader-election 7 and system 19 (150 seats, 245 shares)", before)
		}
		return nil
	})

	create(t, rp("seats-big", 5000, 27, 16, 4, 50))
	create(t, rp("seats-small", 6000, 4, 16, 4, 50))
	create(t, fs("seats-small", 1000, "seats-small", apitest.And(apitest.Equals(flowv1.FieldUser, "seats-user"))))
	startOperator(t, operatorConfig{seatsPeriod: time.Second, maxSeatLoss: ptr.To[int32](10)})
	small := waitProjectedRP(t, "seats-small")
	big := waitRPReason(t, "seats-big", flowv1.ReasonOverBudget)
	for _, want := range []string{"spec.assuredConcurrencyShares", "leader-election: 6 of 150 seats instead of 7",
		"floor(245×10/90) = 27 shares together, and with kube-apiserver's 150 seats rounded up per level 4", "at most 4"} {
		if !strings.Contains(big.message, want) {
			t.Errorf("seats-big: message lacks %q: %s", want, big.message)
		}
	}
	harness.Eventually(t, waitTimeout, "the check in TestShareBudgetKeepsNativeSeats", func() error {
		for _, l := range keptLevels {
			after, _ := scrapeMetric(t, "apiserver_flowcontrol_nominal_limit_seats", "priority_level", l)
			if 10*after < 9*before[l] {
				return fmt.Errorf("%s has %v nominal seats, below 90%% of %v", l, after, before[l])
			}
		}
		return statusSeatsAre(t, "seats-small", small)
	})
	if small != native.NativeName("seats-small") {
		t.Errorf("seats-small projected onto %s", small)
	}
}
