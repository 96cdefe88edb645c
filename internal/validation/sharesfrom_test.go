package validation

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestCarvedSharesAreNotCharged: a RequestPriority with sharesFrom takes nothing from the
// share budget and its shares from the donor; without it, the reverse.
func TestCarvedSharesAreNotCharged(t *testing.T) {
	rp := &v1alpha1.RequestPriority{Spec: v1alpha1.RequestPrioritySpec{PriorityLevel: 100,
		AssuredConcurrencyShares: ptr.To[int32](40), SharesFrom: "workload-low"}}
	if got, carved := LimitedShares(rp), CarvedShares(rp); got != 0 || carved != 40 {
		t.Errorf("carving: budget %d, donor %d; want 0 and 40", got, carved)
	}
	rp.Spec.SharesFrom = ""
	if got, carved := LimitedShares(rp), CarvedShares(rp); got != 40 || carved != 0 {
		t.Errorf("adding: budget %d, donor %d; want 40 and 0", got, carved)
	}
}

// TestSharesFromKeepsTheFloor: the donor keeps at least MinDonorShares, counting what others
// already carve.
func TestSharesFromKeepsTheFloor(t *testing.T) {
	donor := Donor{Name: "workload-low", Exists: true, Shares: 100}
	if errs := SharesFrom(59, donor, 40); len(errs) != 0 {
		t.Errorf("100-40-59 = 1 refused: %v", errs)
	}
	if errs := SharesFrom(60, donor, 40); len(errs) != 1 || errs[0].Field != "spec.sharesFrom" {
		t.Errorf("100-40-60 = 0 admitted or misplaced: %v", errs)
	}
}

// TestSharesFromRefusesMandatoryLevels: catch-all is reset by kube-apiserver whatever its
// annotation says, so it cannot give shares, though it has 5.
func TestSharesFromRefusesMandatoryLevels(t *testing.T) {
	errs := SharesFrom(1, Donor{Name: "catch-all", Exists: true, Shares: 5}, 0)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "mandatory") {
		t.Errorf("catch-all as donor: %v, want refused as mandatory", errs)
	}
}
