package webhooks

import (
	"context"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// stockBudget is the share budget at the default 10% on a stock cluster, whose mandatory and
// suggested levels hold 245 shares: floor(245×10/90). The tests below sit one share either side
// of it, where any share counted twice, kept after a delete or taken from an owned level shows.
const stockBudget = 27

// budgetBook is shareTotals fed through fake informers, as the manager's cache feeds it, with
// kube-apiserver's mandatory and suggested levels stored.
type budgetBook struct {
	t      *testing.T
	totals *shareTotals
	rps    *controllertest.FakeInformer
	levels *controllertest.FakeInformer
}

func newBudgetBook(t *testing.T) *budgetBook {
	t.Helper()
	ctx := context.Background()
	informers := &informertest.FakeInformers{Scheme: managerbase.Scheme()}
	totals, err := newShareTotals(ctx, informers, budget.DefaultMaxLossPercent)
	if err != nil {
		t.Fatal(err)
	}
	b := &budgetBook{t: t, totals: totals}
	if b.rps, err = informers.FakeInformerFor(ctx, &v1alpha1.RequestPriority{}); err != nil {
		t.Fatal(err)
	}
	if b.levels, err = informers.FakeInformerFor(ctx, &flowcontrolv1.PriorityLevelConfiguration{}); err != nil {
		t.Fatal(err)
	}
	for _, plc := range bootstrapset.PriorityLevels() {
		b.levels.Add(&plc)
	}
	return b
}

// admits reports whether the budget rule admits obj (a create when old is nil), reading the
// totals as the RequestPriority webhook does.
func (b *budgetBook) admits(old, obj *v1alpha1.RequestPriority) bool {
	b.t.Helper()
	bud, others, err := b.totals.Budget(context.Background(), obj.Name)
	if err != nil {
		b.t.Fatal(err)
	}
	if bud.Bootstrap {
		b.t.Fatal("the budget stands in the bootstrap levels: the cache's levels were not read")
	}
	return len(validation.RequestPriorityShares(old, obj, others, bud)) == 0
}

// expect fails the test unless the budget rule admits (or refuses) a create of name with shares.
func (b *budgetBook) expect(admit bool, name string, shares int32, why string) {
	b.t.Helper()
	if got := b.admits(nil, sharesRP(name, shares)); got != admit {
		b.t.Errorf("creating %s with %d shares: admitted %v, want %v: %s", name, shares, got, admit, why)
	}
}

func sharesRP(name string, shares int32) *v1alpha1.RequestPriority {
	return &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.RequestPrioritySpec{PriorityLevel: 5000, AssuredConcurrencyShares: ptr.To(shares)}}
}

func limitedLevel(name string, shares int32, owned bool) *flowcontrolv1.PriorityLevelConfiguration {
	plc := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To(shares),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
	if owned {
		plc.Labels = map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue}
		plc.Annotations = map[string]string{v1alpha1.AnnotationSource: native.Source("RequestPriority", name)}
	}
	return plc
}

// TestShareBudgetAtTheDefault: on a stock cluster at the default 10%, 27 shares fit and 28 do
// not, alone or together.
func TestShareBudgetAtTheDefault(t *testing.T) {
	b := newBudgetBook(t)
	b.expect(true, "a", stockBudget, "the budget is floor(245×10/90) = 27")
	b.expect(false, "a", stockBudget+1, "the budget is 27")
	b.rps.Add(sharesRP("a", 20))
	b.expect(true, "b", stockBudget-20, "20 + 7 = 27")
	b.expect(false, "b", stockBudget-20+1, "20 + 8 = 28")
}

// TestShareBudgetUpdateCountsItsSharesOnce: an update is checked without the object's own
// cached shares, and the cache's update replaces them instead of adding to them.
func TestShareBudgetUpdateCountsItsSharesOnce(t *testing.T) {
	b := newBudgetBook(t)
	old := sharesRP("a", 20)
	b.rps.Add(old)
	raised := sharesRP("a", stockBudget)
	if !b.admits(old, raised) {
		t.Errorf("raising a from 20 to 27 shares is refused: its cached 20 were counted as another's")
	}
	if b.admits(old, sharesRP("a", stockBudget+1)) {
		t.Errorf("raising a from 20 to 28 shares is admitted")
	}
	lowered := sharesRP("a", stockBudget-1)
	b.rps.Update(old, lowered)
	b.expect(true, "b", 1, "a now holds 26, not 20 + 26")
	b.expect(false, "b", 2, "a holds 26")
	b.rps.Update(lowered, sharesRP("a", 5))
	b.expect(true, "b", stockBudget-5, "a lowered to 5 leaves 22")
}

// TestShareBudgetDeletedObjectsFreeTheirShares: a deleted RequestPriority gives its shares
// back, also when the informer only saw its tombstone, and a deleted native level the operator
// does not own takes its share of the budget away.
func TestShareBudgetDeletedObjectsFreeTheirShares(t *testing.T) {
	b := newBudgetBook(t)
	a := sharesRP("a", stockBudget)
	b.rps.Add(a)
	b.expect(false, "b", 1, "a holds the whole budget")
	b.rps.Delete(a)
	b.expect(true, "b", stockBudget, "a was deleted")

	c := sharesRP("c", stockBudget)
	b.rps.Add(c)
	b.totals.delete(toolscache.DeletedFinalStateUnknown{Key: "c", Obj: c})
	b.expect(true, "b", stockBudget, "c was deleted (seen as a tombstone)")

	provider := limitedLevel("provider", 45, false)
	b.levels.Add(provider)
	b.expect(true, "b", 32, "a provider's level of 45 shares raises the budget to floor(290×10/90) = 32")
	b.levels.Delete(provider)
	b.expect(false, "b", stockBudget+1, "the provider's level was deleted: the budget is 27 again")
}

// TestShareBudgetIgnoresOwnedLevels: the levels the operator writes are what the budget
// bounds, not levels it protects; a level that becomes owned leaves the kept levels.
func TestShareBudgetIgnoresOwnedLevels(t *testing.T) {
	b := newBudgetBook(t)
	b.levels.Add(limitedLevel("apf-tenants", 100, true))
	b.expect(false, "b", stockBudget+1, "an owned level of 100 shares does not raise the budget")
	adopted := limitedLevel("provider", 45, false)
	b.levels.Add(adopted)
	b.expect(true, "b", 32, "the unowned level raises the budget to 32")
	b.levels.Update(adopted, limitedLevel("provider", 45, true))
	b.expect(false, "b", stockBudget+1, "the level is now owned: the budget is 27 again")
}
