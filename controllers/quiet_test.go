package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestMissingReferenceWaitsForQuiet: a FlowSchema applied before its RequestPriority, and seen
// alone by a snapshot, gets exactly one status write (Ready) and no RequestPriorityNotFound
// event; a FlowSchema whose RequestPriority never comes still reports RequestPriorityNotFound,
// once the users' objects have been quiet for the user quiet period (testQuiet.user).
func TestMissingReferenceWaitsForQuiet(t *testing.T) {
	resetCluster(t)
	op := startOperator(t, operatorConfig{options: Options{ManageDefaults: false, Clock: realClock}})
	waitSnapshots(t, op, 1)

	computed := snapshotCount(t, op)
	create(t, userFS("early", "late"))
	// A snapshot computed after the creation sees the FlowSchema without its RequestPriority.
	waitSnapshots(t, op, computed+1)
	create(t, userRP("late", 6000))
	waitFSReason(t, "early", "True/Accepted")

	typo := userFS("typo", "missing")
	create(t, typo)
	waitFSReason(t, "typo", "False/RequestPriorityNotFound")
	fs := getFS(t, "typo")
	ready := meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionReady)
	// Both times have a one-second resolution.
	if waited := ready.LastTransitionTime.Sub(fs.CreationTimestamp.Time); waited < testQuiet.user-time.Second {
		t.Errorf("RequestPriorityNotFound written %s after the FlowSchema's creation, want at least %s (the user quiet period)",
			waited, testQuiet.user)
	}
	waitEvent(t, "FlowSchema", "typo", flowv1.ReasonRequestPriorityNotFound)

	if writes := statusWritesOf(op, "FlowSchema", "early"); writes != 1 {
		t.Errorf("FlowSchema early: %d status writes, want 1; the operator's writes: %v", writes, op.writesSince(0))
	}
	var events eventsv1.EventList
	if err := k8s.List(context.Background(), &events); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Regarding.Name == "early" && e.Reason == flowv1.ReasonRequestPriorityNotFound {
			t.Errorf("FlowSchema early: a %s event, want none: %s", e.Reason, e.Note)
		}
	}
}

// statusWritesOf counts the operator's status writes of the named object of kind.
func statusWritesOf(op *testOperator, kind, name string) int {
	n := 0
	for _, w := range op.writesSince(0) {
		if strings.HasPrefix(w, "update status ") && strings.HasSuffix(w, "."+kind+" "+name) {
			n++
		}
	}
	return n
}

// snapshotCount is how many snapshots the operator has computed.
func snapshotCount(t testing.TB, op *testOperator) uint64 {
	t.Helper()
	families, err := op.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "apf_operator_snapshot_duration_seconds" {
			return f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatal("no apf_operator_snapshot_duration_seconds metric")
	return 0
}

// waitSnapshots waits until the operator has computed at least n snapshots.
func waitSnapshots(t testing.TB, op *testOperator, n uint64) {
	t.Helper()
	eventually(t, func() error {
		if got := snapshotCount(t, op); got < n {
			return fmt.Errorf("%d snapshots computed, want %d", got, n)
		}
		return nil
	})
}
