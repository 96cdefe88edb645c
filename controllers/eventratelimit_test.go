package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

func serverLimit(name string, burst int32) *flowv1.EventRateLimit {
	return &flowv1.EventRateLimit{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.EventRateLimitSpec{
		Limits: []flowv1.EventRateLimitLimit{{Type: flowv1.EventRateLimitServer, QPS: 1, Burst: burst}}}}
}

// waitERLStatus waits until the object's status passes check.
func waitERLStatus(t *testing.T, name string, check func(*flowv1.EventRateLimit) error) {
	t.Helper()
	eventually(t, func() error {
		var o flowv1.EventRateLimit
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &o); err != nil {
			return err
		}
		return check(&o)
	})
}

func readyIs(o *flowv1.EventRateLimit, status metav1.ConditionStatus, reason string) error {
	c := meta.FindStatusCondition(o.Status.Conditions, flowv1.ConditionReady)
	if c == nil || c.Status != status || c.Reason != reason || o.Status.ObservedGeneration != o.Generation {
		return fmt.Errorf("status %+v, want Ready=%s/%s at generation %d", o.Status, status, reason, o.Generation)
	}
	return nil
}

// TestEventRateLimitObjectsConfigureEngine: creating, changing and deleting an EventRateLimit
// configures the webhook's engine, and the status reports Ready and the engine's counts.
func TestEventRateLimitObjectsConfigureEngine(t *testing.T) {
	engine := eventratelimit.New(clocktesting.NewFakePassiveClock(time.Now()), nil)
	startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNone, EventRateLimit: engine,
		EventRateLimitStatusPeriod: 100 * time.Millisecond}})
	o := serverLimit("erl-engine", 2)
	create(t, o)
	t.Cleanup(func() { remove(t, o) })
	eventually(t, func() error {
		if _, ok := engine.Counts(o.Name); !ok {
			return fmt.Errorf("not enforced yet")
		}
		return nil
	})
	admitted := 0
	for range 3 {
		if engine.Admit(&eventratelimit.Attributes{Namespace: "a"}).Allowed {
			admitted++
		}
	}
	if admitted != 2 {
		t.Fatalf("admitted %d of 3 with burst 2", admitted)
	}
	waitERLStatus(t, o.Name, func(got *flowv1.EventRateLimit) error {
		if err := readyIs(got, metav1.ConditionTrue, flowv1.ReasonAccepted); err != nil {
			return err
		}
		if got.Status.AcceptedEvents != 2 || got.Status.RejectedEvents != 1 || got.Status.CountingSince == nil {
			return fmt.Errorf("counts %+v, want 2 accepted, 1 rejected", got.Status)
		}
		return nil
	})
	var cur flowv1.EventRateLimit
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(o), &cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.Limits[0].Burst = 5
	if err := k8s.Update(context.Background(), &cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		if c, _ := engine.Counts(o.Name); c.Generation != cur.Generation {
			return fmt.Errorf("engine enforces generation %d, want %d", c.Generation, cur.Generation)
		}
		return nil
	})
	waitERLStatus(t, o.Name, func(got *flowv1.EventRateLimit) error {
		if got.Status.AcceptedEvents != 0 || got.Status.RejectedEvents != 0 {
			return fmt.Errorf("counts %+v, want them restarted with the new generation", got.Status)
		}
		return readyIs(got, metav1.ConditionTrue, flowv1.ReasonAccepted)
	})
	remove(t, o)
	eventually(t, func() error {
		if _, ok := engine.Counts(o.Name); ok {
			return fmt.Errorf("still enforced after deletion")
		}
		return nil
	})
}

// TestEventRateLimitDisabledStatus: without the events webhook the status says nothing is
// enforced.
func TestEventRateLimitDisabledStatus(t *testing.T) {
	startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNone}})
	o := serverLimit("erl-disabled", 1)
	create(t, o)
	t.Cleanup(func() { remove(t, o) })
	waitERLStatus(t, o.Name, func(got *flowv1.EventRateLimit) error {
		return readyIs(got, metav1.ConditionFalse, flowv1.ReasonEnforcementDisabled)
	})
}
