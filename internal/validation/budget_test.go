package validation_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/validation"
)

func sharesRP(level, shares int32) *v1alpha1.RequestPriority {
	rp := &v1alpha1.RequestPriority{Spec: v1alpha1.RequestPrioritySpec{PriorityLevel: level}}
	if level != 0 {
		rp.Spec.AssuredConcurrencyShares = ptr.To(shares)
	}
	rp.Name = "tenant"
	return rp
}

// TestRequestPriorityShares: on a stock cluster at 10% the RequestPriorities above level 0 may
// hold 27 shares; 100000 is refused with the arithmetic, lowering is always admitted.
func TestRequestPriorityShares(t *testing.T) {
	b := budget.New(nil, 10, 0)
	path := field.NewPath("spec", "assuredConcurrencyShares")
	for _, c := range []struct {
		name     string
		old, obj *v1alpha1.RequestPriority
		others   int64
		refused  bool
		atMost   string
	}{
		{name: "within the budget", obj: sharesRP(100, 27)},
		{name: "with the others, within", obj: sharesRP(100, 7), others: 20},
		{name: "100000 refused", obj: sharesRP(100, 100000), refused: true, atMost: "at most 27"},
		{name: "one over", obj: sharesRP(100, 8), others: 20, refused: true, atMost: "at most 7"},
		{name: "raising over refused", old: sharesRP(100, 5), obj: sharesRP(100, 9), others: 20, refused: true},
		{name: "lowering while over admitted", old: sharesRP(100, 50), obj: sharesRP(100, 40), others: 20},
		{name: "unchanged while over admitted", old: sharesRP(100, 50), obj: sharesRP(100, 50), others: 20},
		{name: "others over, 0 admitted", obj: sharesRP(100, 0), others: 1000},
		{name: "exempt takes nothing", obj: sharesRP(0, 0), others: 1000},
	} {
		errs := validation.RequestPriorityShares(c.old, c.obj, c.others, b)
		if !c.refused {
			if len(errs) != 0 {
				t.Errorf("%s: refused: %v", c.name, errs)
			}
			continue
		}
		if len(errs) != 1 || errs[0].Type != field.ErrorTypeInvalid || errs[0].Field != path.String() {
			t.Errorf("%s: errors %v, want one Invalid %s", c.name, errs, path)
			continue
		}
		for _, want := range []string{"floor(245×10/90) = 27", "system: 30 of", "raise --native-max-seat-loss-percent", c.atMost} {
			if !strings.Contains(errs[0].Detail, want) {
				t.Errorf("%s: message %q lacks %q", c.name, errs[0].Detail, want)
			}
		}
	}
}

// TestRequestPriorityBorrowing: on a stock cluster at 10% explicit borrowing limits may ask
// 1399 share-percent together (10% of the suggested levels' 13990); 27 shares at 52% (1404) is
// refused on spec.borrowingLimitPercent with the most that fits (51), lowering is admitted, and
// an absent limit (the projector's default, lowered to fit) never is refused.
func TestRequestPriorityBorrowing(t *testing.T) {
	b := budget.New(nil, 10, 0)
	withLimit := func(shares, limit int32) *v1alpha1.RequestPriority {
		rp := sharesRP(100, shares)
		rp.Spec.BorrowingLimitPercent = ptr.To(limit)
		return rp
	}
	errs := validation.RequestPriorityBorrowing(nil, withLimit(27, 52), 0, b)
	if len(errs) != 1 || errs[0].Field != "spec.borrowingLimitPercent" ||
		!strings.Contains(errs[0].Detail, "floor(10×13990/100) = 1399 share-percent") || !strings.Contains(errs[0].Detail, "at most 51") {
		t.Errorf("27 shares at 52%%: %v", errs)
	}
	for _, c := range []struct {
		name     string
		old, obj *v1alpha1.RequestPriority
		others   int64
	}{
		{"fits", nil, withLimit(27, 51), 0},
		{"absent", nil, sharesRP(100, 27), 100000},
		{"lowered while over", withLimit(27, 90), withLimit(27, 80), 0},
	} {
		if errs := validation.RequestPriorityBorrowing(c.old, c.obj, c.others, b); len(errs) != 0 {
			t.Errorf("%s: refused: %v", c.name, errs)
		}
	}
	if errs := validation.RequestPriorityBorrowing(nil, withLimit(10, 10), 1350, b); len(errs) != 1 {
		t.Errorf("100 more share-percent beside 1350: %v, want refused", errs)
	}
}
