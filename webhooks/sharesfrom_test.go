package webhooks

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// TestSharesFromLive: on a real kube-apiserver, a RequestPriority that carves from a level
// that does not exist, or more than leader-election's 10 shares minus 1, is refused on
// spec.sharesFrom with the reason; one carving 5 from workload-low is admitted, and carves
// are not charged to the share budget (100000 shares carved would be over it: refused by
// the donor's arithmetic, not the budget).
func TestSharesFromLive(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	path := "spec.sharesFrom"
	missing := queuedRP("it-carve-missing", 7300, 1, 0)
	missing.Spec.SharesFrom = "no-such-level"
	assertInvalid(t, s.admin.Create(ctx, missing), field.ErrorTypeInvalid, path, "no PriorityLevelConfiguration of that name exists")
	greedy := queuedRP("it-carve-greedy", 7400, 1, 0)
	greedy.Spec.SharesFrom, greedy.Spec.AssuredConcurrencyShares = "leader-election", ptr.To[int32](10)
	assertInvalid(t, s.admin.Create(ctx, greedy), field.ErrorTypeInvalid, path, "lower assuredConcurrencyShares to at most 9")
	huge := queuedRP("it-carve-huge", 7500, 1, 0)
	huge.Spec.SharesFrom, huge.Spec.AssuredConcurrencyShares = "workload-low", ptr.To[int32](100000)
	assertInvalid(t, s.admin.Create(ctx, huge), field.ErrorTypeInvalid, path, "at most 99")
	fits := queuedRP("it-carve-fits", 7600, 1, 0)
	fits.Spec.SharesFrom, fits.Spec.AssuredConcurrencyShares = "workload-low", ptr.To[int32](5)
	if err := s.admin.Create(ctx, fits); err != nil {
		t.Fatalf("carving 5 of workload-low's 100 shares must be admitted: %v", err)
	}
	t.Cleanup(func() { _ = s.admin.Delete(context.Background(), fits) })
}
