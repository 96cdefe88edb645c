package webhooks

import (
	"context"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// suiteMaxSeatLossPercent is the suite's --native-max-seat-loss-percent: the other tests'
// RequestPriorities (10 shares each) stay far within its budget of 2205 shares.
const suiteMaxSeatLossPercent = 90

// TestShareBudgetLive: on a real kube-apiserver (its mandatory and suggested levels hold 245
// shares), assuredConcurrencyShares 100000 is refused on the field with the budget's
// arithmetic; a RequestPriority within it is admitted and may lower its shares; a native level
// an admin adds raises the budget, read from the cache.
func TestShareBudgetLive(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	path := "spec.assuredConcurrencyShares"
	huge := queuedRP("it-budget-huge", 7100, 1, 0)
	huge.Spec.AssuredConcurrencyShares = ptr.To[int32](100000)
	assertInvalid(t, s.admin.Create(ctx, huge), field.ErrorTypeInvalid, path, "floor(245×90/10) = 2205 shares")
	err := s.admin.Create(ctx, huge)
	for _, want := range []string{"over the native share budget", "system: 30 of 10", "raise --native-max-seat-loss-percent"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %v lacks %q", err, want)
		}
	}

	ok := queuedRP("it-budget-ok", 7200, 1, 0)
	if err := s.admin.Create(ctx, ok); err != nil {
		t.Fatalf("a RequestPriority of 10 shares is within the budget: %v", err)
	}
	s.waitCached(t, ok)
	ok.Spec.AssuredConcurrencyShares = ptr.To[int32](100000)
	assertInvalid(t, s.admin.Update(ctx, ok), field.ErrorTypeInvalid, path, "over the native share budget")
	ok.Spec.AssuredConcurrencyShares = ptr.To[int32](5)
	if err := s.admin.Update(ctx, ok); err != nil {
		t.Fatalf("lowering shares must be admitted: %v", err)
	}

	extra := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "it-provider-level"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](55),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
	if err := s.admin.Create(ctx, extra); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.admin.Delete(context.Background(), extra) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.admin.Create(ctx, huge)
		if err != nil && strings.Contains(err.Error(), "floor(300×90/10) = 2700 shares") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with a native level of 55 more shares the budget is still not 2700: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
