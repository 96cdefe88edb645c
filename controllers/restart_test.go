package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRestartMidwayConverges stops an operator after three of its ten creations (it fails
// every later write, as a crashed process would) and starts a new one.
func TestRestartMidwayConverges(t *testing.T) {
	resetCluster(t)
	var made atomic.Int32
	crashing := manageDefaults()
	crashing.create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if made.Load() >= 3 {
			return errors.New("simulated crash")
		}
		err := c.Create(ctx, obj, opts...)
		if err == nil {
			made.Add(1)
		}
		return err
	}
	first := startOperator(t, crashing)
	eventually(t, func() error {
		if n := made.Load(); n < 3 {
			return fmt.Errorf("%d creations so far", n)
		}
		return nil
	})
	first.stop()
	rps, fss, err := listOurs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rps.Items) + len(fss.Items); n != 3 {
		t.Fatalf("the first operator left %d objects, want 3", n)
	}

	second := startOperator(t, manageDefaults())
	waitAllReady(t, defaultNames, defaultNames)
	wantCounter(t, second.registry, "apf_operator_defaults_created_total", kindRequestPriority, 2)
	wantCounter(t, second.registry, "apf_operator_defaults_created_total", kindFlowSchema, 5)
	wantCounter(t, second.registry, "apf_operator_defaults_conflicts_total", kindRequestPriority, 0)
	wantCounter(t, second.registry, "apf_operator_defaults_conflicts_total", kindFlowSchema, 0)
}

// TestFailedCreationDoesNotLeaveAGap fails the first creation of the plan once: the operator
// must not go on to create system-top (which ends the need to create) and so leave the set
// incomplete; the retry creates everything.
func TestFailedCreationDoesNotLeaveAGap(t *testing.T) {
	resetCluster(t)
	var failed atomic.Bool
	cfg := manageDefaults()
	cfg.create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if obj.GetName() == "system-high" && failed.CompareAndSwap(false, true) {
			return errors.New("simulated API server error")
		}
		return c.Create(ctx, obj, opts...)
	}
	startOperator(t, cfg)
	waitAllReady(t, defaultNames, defaultNames)
	if !failed.Load() {
		t.Fatal("the failure was never injected")
	}
}
