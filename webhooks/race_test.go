package webhooks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/internal/native"
)

// raceWriters is how many clients create the same priority level at once.
const raceWriters = 24

// TestDuplicateLevelRace creates one priority level from raceWriters goroutines at once, with
// the webhook up (it reads a cache, so several creates can pass it before the cache holds the
// first). Whatever got stored, the status rule decides: exactly one object is Ready — the
// oldest by creationTimestamp, then name — the others report DuplicatePriorityLevel, and only
// the winner is projected onto kube-apiserver. The burst is repeated (new level each time)
// until it stores at least two objects, so that the rule is exercised, not only the webhook.
func TestDuplicateLevelRace(t *testing.T) {
	s := envSuite(t)
	s.startReconcilers(t)
	for round := range 5 {
		level := int32(5900 + round)
		stored := s.createBurst(t, fmt.Sprintf("it-race-%d", round), level)
		t.Logf("round %d: %d of %d creates at level %d passed the webhook", round, len(stored), raceWriters, level)
		if len(stored) == 0 {
			t.Fatalf("no create of level %d was admitted", level)
		}
		s.checkOneWinner(t, stored)
		if len(stored) > 1 {
			return
		}
	}
	t.Fatalf("the webhook rejected every concurrent duplicate in 5 rounds: the status rule was not exercised")
}

// createBurst creates raceWriters RequestPriorities named prefix-NN at level, all at once, and
// returns the names the API server stored. Every rejection must be the webhook's duplicate.
func (s *suite) createBurst(t *testing.T, prefix string, level int32) []string {
	t.Helper()
	start := make(chan struct{})
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		stored []string
		errs   []error
	)
	for i := range raceWriters {
		rp := queuedRP(fmt.Sprintf("%s-%02d", prefix, i), level, 1, 0)
		wg.Go(func() {
			<-start
			err := s.admin.Create(context.Background(), rp)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored = append(stored, rp.Name)
			case !apierrors.IsInvalid(err):
				errs = append(errs, fmt.Errorf("%s: %w", rp.Name, err))
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("creates failed other than as duplicates: %v", err)
	}
	return stored
}

// checkOneWinner waits until the stored objects report the outcome of the status rule.
func (s *suite) checkOneWinner(t *testing.T, names []string) {
	t.Helper()
	ctx := context.Background()
	objs := make([]*v1alpha1.RequestPriority, len(names))
	for i, name := range names {
		objs[i] = &v1alpha1.RequestPriority{}
		if err := s.admin.Get(ctx, client.ObjectKey{Name: name}, objs[i]); err != nil {
			t.Fatal(err)
		}
	}
	sort.Slice(objs, func(i, j int) bool {
		a, b := objs[i].CreationTimestamp.Time, objs[j].CreationTimestamp.Time
		return a.Before(b) || (a.Equal(b) && objs[i].Name < objs[j].Name)
	})
	winner := objs[0].Name
	eventuallyTrue(t, func() error {
		for _, o := range objs {
			got := &v1alpha1.RequestPriority{}
			if err := s.admin.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
				return err
			}
			if err := raceOutcome(got, got.Name == winner); err != nil {
				return err
			}
		}
		return s.onlyProjected(ctx, names, winner)
	})
}

// raceOutcome checks Ready and Projected of one object of the burst.
func raceOutcome(rp *v1alpha1.RequestPriority, winner bool) error {
	ready := meta.FindStatusCondition(rp.Status.Conditions, v1alpha1.ConditionReady)
	projected := meta.FindStatusCondition(rp.Status.Conditions, v1alpha1.ConditionProjected)
	if ready == nil || projected == nil || ready.ObservedGeneration != rp.Generation {
		return fmt.Errorf("%s: no current Ready and Projected conditions yet", rp.Name)
	}
	switch {
	case winner && (ready.Reason != v1alpha1.ReasonAccepted || projected.Reason != v1alpha1.ReasonProjected):
		return fmt.Errorf("winner %s: Ready %s/%s, Projected %s; want Accepted, Projected", rp.Name, ready.Status,
			ready.Reason, projected.Reason)
	case !winner && (ready.Reason != v1alpha1.ReasonDuplicatePriorityLevel || projected.Reason != v1alpha1.ReasonNotInEffect):
		return fmt.Errorf("loser %s: Ready %s/%s, Projected %s; want %s, %s", rp.Name, ready.Status, ready.Reason,
			projected.Reason, v1alpha1.ReasonDuplicatePriorityLevel, v1alpha1.ReasonNotInEffect)
	}
	return nil
}

// onlyProjected checks that of names only the winner has a native PriorityLevelConfiguration.
func (s *suite) onlyProjected(ctx context.Context, names []string, winner string) error {
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := s.admin.List(ctx, &plcs); err != nil {
		return err
	}
	sources := map[string]string{}
	for i := range plcs.Items {
		if p := &plcs.Items[i]; native.Owned(p) {
			sources[p.Annotations[v1alpha1.AnnotationSource]] = p.Name
		}
	}
	for _, name := range names {
		_, has := sources[native.KindRequestPriority+"/"+name]
		if has != (name == winner) {
			return fmt.Errorf("RequestPriority %s (winner %s) projected natively: %v", name, winner, has)
		}
	}
	return nil
}

// startReconcilers runs the operator's reconcilers (status and native projection, no defaults)
// against the suite's API server until the test ends, beside the suite's webhook manager, with
// the suite's --native-max-seat-loss-percent, as the operator gives its webhook and its
// reconcilers the one flag. (At the default 10%, the levels of 10 shares that the package's
// earlier tests and this test's earlier rounds leave fill the budget: when a second round ran,
// its winner was reported OverBudget.)
func (s *suite) startReconcilers(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := managerbase.New(ctx, s.cfg, ctrl.Options{
		Scheme:                 s.scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := controllers.SetupWithManager(mgr, controllers.Options{Enforcement: controllers.EnforcementNative,
		NativeMaxSeatLossPercent: ptr.To[int32](suiteMaxSeatLossPercent), Registerer: prometheus.NewRegistry()}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("reconcilers stopped with %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the reconcilers' cache did not sync")
	}
}

// eventuallyTrue polls check until it returns nil, for up to 60 seconds.
func eventuallyTrue(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up after 60s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
