package webhooks

import (
	"context"
	"fmt"
	"sync"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// ShareTotals reads what the native share budget rule (validation.RequestPriorityShares) needs.
type ShareTotals interface {
	// Budget returns the share budget and the shares (validation.LimitedShares) of every
	// RequestPriority other than the one named.
	Budget(ctx context.Context, name string) (budget.Budget, int64, error)
}

// shareTotals follows, through event handlers on the manager's cache, the shares of every
// RequestPriority and of the native levels the operator does not own: an admission reads two
// sums, never a List of every object.
type shareTotals struct {
	maxLossPercent int32
	synced         []toolscache.InformerSynced

	mu        sync.Mutex
	rps       map[string]int64        // validation.LimitedShares by name
	sum       int64                   // their sum
	borrow    map[string]int64        // validation.ExplicitBorrowing by name
	borrowSum int64                   // their sum
	levels    map[string]budget.Level // the native levels the operator does not own, by name
}

var _ ShareTotals = (*shareTotals)(nil)

// newShareTotals registers the event handlers on c's informers (before or after c starts).
func newShareTotals(ctx context.Context, c cache.Cache, maxLossPercent int32) (*shareTotals, error) {
	s := &shareTotals{maxLossPercent: maxLossPercent, rps: map[string]int64{}, levels: map[string]budget.Level{},
		borrow: map[string]int64{}}
	for _, w := range []struct {
		obj client.Object
		set func(obj any)
	}{
		{&v1alpha1.RequestPriority{}, s.setRequestPriority},
		{&flowcontrolv1.PriorityLevelConfiguration{}, s.setLevel},
	} {
		inf, err := c.GetInformer(ctx, w.obj)
		if err != nil {
			return nil, fmt.Errorf("watching %T for the native share budget: %w", w.obj, err)
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    w.set,
			UpdateFunc: func(_, cur any) { w.set(cur) },
			DeleteFunc: s.delete,
		})
		if err != nil {
			return nil, fmt.Errorf("watching %T for the native share budget: %w", w.obj, err)
		}
		s.synced = append(s.synced, reg.HasSynced)
	}
	return s, nil
}

func (s *shareTotals) setRequestPriority(obj any) {
	rp, ok := obj.(*v1alpha1.RequestPriority)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setSharesLocked(rp.Name, validation.LimitedShares(rp))
	s.setBorrowingLocked(rp.Name, validation.ExplicitBorrowing(rp))
}

func (s *shareTotals) setBorrowingLocked(name string, borrowing int64) {
	s.borrowSum += borrowing - s.borrow[name]
	if borrowing == 0 {
		delete(s.borrow, name)
		return
	}
	s.borrow[name] = borrowing
}

func (s *shareTotals) setSharesLocked(name string, shares int64) {
	s.sum += shares - s.rps[name]
	if shares == 0 {
		delete(s.rps, name)
		return
	}
	s.rps[name] = shares
}

func (s *shareTotals) setLevel(obj any) {
	plc, ok := obj.(*flowcontrolv1.PriorityLevelConfiguration)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if native.Owned(plc) {
		delete(s.levels, plc.Name)
		return
	}
	lvl := budget.LevelOf(plc)
	lvl.Shares = native.OriginalShares(plc) // a donor's shares before carving
	s.levels[plc.Name] = lvl
}

func (s *shareTotals) delete(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch o := obj.(type) {
	case *v1alpha1.RequestPriority:
		s.setSharesLocked(o.Name, 0)
		s.setBorrowingLocked(o.Name, 0)
	case *flowcontrolv1.PriorityLevelConfiguration:
		delete(s.levels, o.Name)
	}
}

// Budget implements ShareTotals; it waits for the cache to hold every object first.
func (s *shareTotals) Budget(ctx context.Context, name string) (budget.Budget, int64, error) {
	if !toolscache.WaitForCacheSync(ctx.Done(), s.synced...) {
		return budget.Budget{}, 0, fmt.Errorf("the cache of RequestPriorities and native priority levels is not synced yet")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := make([]budget.Level, 0, len(s.levels))
	for _, l := range s.levels {
		kept = append(kept, l)
	}
	return budget.New(kept, s.maxLossPercent, 0), s.sum - s.rps[name], nil
}

// BorrowingTotals reads what the native borrowing rule (validation.RequestPriorityBorrowing)
// needs beside the share budget; ShareTotals may implement it.
type BorrowingTotals interface {
	// Borrowing returns the explicit borrowing (validation.ExplicitBorrowing) of every
	// RequestPriority other than the one named.
	Borrowing(ctx context.Context, name string) (int64, error)
}

var _ BorrowingTotals = (*shareTotals)(nil)

// Borrowing implements BorrowingTotals; it waits for the cache to hold every object first.
func (s *shareTotals) Borrowing(ctx context.Context, name string) (int64, error) {
	if !toolscache.WaitForCacheSync(ctx.Done(), s.synced...) {
		return 0, fmt.Errorf("the cache of RequestPriorities and native priority levels is not synced yet")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.borrowSum - s.borrow[name], nil
}
