package native_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/test/harness"
)

const configmapsPath = "/api/v1/namespaces/default/configmaps"

// TestEnforcementByUID proves that kube-apiserver classifies requests with the native objects
// the operator projects (by the UIDs in the response headers), that the operator deletes the
// projection of a deleted FlowSchema, restores an owned native object edited by hand, and never
// touches a native object it does not own, even one named like a projection.
func TestEnforcementByUID(t *testing.T) {
	resetCluster(t)
	ctx := context.Background()

	// Native objects that are not the operator's, created first: one named like the projection
	// of our FlowSchema "conflict" (no label, no annotation), and one named like a projection
	// whose source does not exist, carrying the operator's label but no source annotation.
	conflict := unownedFS("apf-conflict", 5000, "conflict-user", nil)
	ghost := unownedFS("apf-ghost", 5001, "ghost-user", map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue})
	create(t, conflict)
	create(t, ghost)
	conflictBefore, ghostBefore := nativeFS(t, conflict.Name), nativeFS(t, ghost.Name)

	create(t, rp("tenant", 5000, 10, 16, 4, 50))
	// The backstop non-top-backstop goes to the logically lowest level, the default
	// workload-low: a request no FlowSchema matches has a priority level of its own.
	createDefaults(t, false)
	create(t, fs("tenant-a", 1000, "tenant", apitest.And(apitest.Equals(flowv1.FieldUser, "tenant-a"))))
	create(t, fs("conflict", 1100, "tenant", apitest.And(apitest.Equals(flowv1.FieldUser, "conflict-user"))))
	op := startOperator(t, operatorConfig{})

	plcName := waitProjectedRP(t, "tenant")
	fsName := waitProjectedFS(t, "tenant-a")
	if plcName != native.NativeName("tenant") || fsName != native.NativeName("tenant-a") {
		t.Errorf("native names %s, %s; want %s, %s", plcName, fsName, native.NativeName("tenant"), native.NativeName("tenant-a"))
	}
	p := waitFSReason(t, "conflict", flowv1.ReasonNameConflict)
	if p.nativeName != "" {
		t.Errorf("FlowSchema conflict is not projected but reports nativeName %q", p.nativeName)
	}
	waitSettled(t)

	plc := nativePLC(t, plcName)
	checkOwned(t, plc, native.KindRequestPriority, "tenant")
	if l := plc.Spec.Limited; plc.Spec.Type != flowcontrolv1.PriorityLevelEnablementLimited || l == nil ||
		ptr.Deref(l.NominalConcurrencyShares, -1) != 10 || ptr.Deref(l.LendablePercent, -1) != 0 ||
		ptr.Deref(l.BorrowingLimitPercent, 1000) > budget.DefaultBorrowingLimitPercent || l.LimitResponse.Queuing == nil ||
		*l.LimitResponse.Queuing != (flowcontrolv1.QueuingConfiguration{Queues: 16, HandSize: 4, QueueLengthLimit: 50}) {
		t.Errorf("native PriorityLevelConfiguration %s: spec %+v, want Limited, shares 10, lendable 0, a borrowing "+
			"limit (the default %d or less: borrowingLimitPercent is absent), 16 queues, hand 4, queue length 50", plcName, plc.Spec, budget.DefaultBorrowingLimitPercent)
	}
	nfs := nativeFS(t, fsName)
	checkOwned(t, nfs, native.KindFlowSchema, "tenant-a")
	if nfs.Spec.PriorityLevelConfiguration.Name != plcName {
		t.Errorf("native FlowSchema %s refers to %q, want %q", fsName, nfs.Spec.PriorityLevelConfiguration.Name, plcName)
	}
	if pr := nfs.Spec.MatchingPrecedence; pr < native.MinPrecedence || pr >= native.MaxPrecedence {
		t.Errorf("native FlowSchema %s: matchingPrecedence %d, want in [%d, %d)", fsName, pr, native.MinPrecedence, native.MaxPrecedence)
	}
	backstop := nativeFS(t, "apf.non-top-backstop")
	checkOwned(t, backstop, native.KindFlowSchema, "non-top-backstop")
	restPLC := nativePLC(t, waitProjectedRP(t, effective.BackstopLowName))
	if backstop.Spec.PriorityLevelConfiguration.Name != restPLC.Name || backstop.Spec.MatchingPrecedence != native.MaxPrecedence {
		t.Errorf("native backstop: level %q precedence %d, want %q and %d", backstop.Spec.PriorityLevelConfiguration.Name,
			backstop.Spec.MatchingPrecedence, restPLC.Name, native.MaxPrecedence)
	}

	// tenant-a is classified by the projection; tenant-b by the backstop, never by tenant-a's.
	tenantA, tenantB := identity{user: "tenant-a"}, identity{user: "tenant-b"}
	expectClassified(t, tenantA, configmapsPath, nfs.UID, plc.UID)
	expectClassified(t, tenantB, configmapsPath, backstop.UID, restPLC.UID)
	if r := get(t, tenantB, configmapsPath); r.flowSchemaUID == string(nfs.UID) || r.priorityLevelUID == string(plc.UID) {
		t.Errorf("tenant-b was classified by tenant-a's native objects: %+v", r)
	}

	// An owned native object edited by hand is restored: the FlowSchema's precedence (moved
	// ahead of kube-apiserver's suggested FlowSchemas, where it would take their requests) and
	// the level's queue length.
	original := nfs.Spec.MatchingPrecedence
	mergePatch(t, nfs, `{"spec":{"matchingPrecedence":500}}`)
	originalQueueLength := plc.Spec.Limited.LimitResponse.Queuing.QueueLengthLimit
	mergePatch(t, plc, `{"spec":{"limited":{"limitResponse":{"queuing":{"queueLengthLimit":3}}}}}`)
	waitRestored(t, fsName, plcName, original, originalQueueLength)
	// So is a precedence edited to another value that keeps the order: the operator keeps only
	// precedences its own field manager wrote.
	mergePatch(t, nativeFS(t, fsName), `{"spec":{"matchingPrecedence":7777}}`)
	waitRestored(t, fsName, plcName, original, originalQueueLength)

	// A second owned FlowSchema appears while the conflict lasts: once it is projected, the
	// operator has planned over a cluster holding both unowned objects and touched neither.
	create(t, fs("tenant-c", 1200, "tenant", apitest.And(apitest.Equals(flowv1.FieldUser, "tenant-c"))))
	waitProjectedFS(t, "tenant-c")
	waitFSReason(t, "conflict", flowv1.ReasonNameConflict)
	waitSettled(t)
	checkUntouched(t, conflictBefore, "unowned")
	checkUntouched(t, ghostBefore, "with the operator's label but no source annotation")
	if n := op.writes.Load(); n == 0 {
		t.Error("the operator's client recorded no write: the write counter is broken")
	}

	// Deleting our FlowSchema deletes its native FlowSchema; tenant-a then falls to the backstop.
	if err := k8s.Delete(ctx, &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a"}}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, waitTimeout, "the check in TestEnforcementByUID", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Name: fsName}, &flowcontrolv1.FlowSchema{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("native FlowSchema %s still exists after its source was deleted (err %v)", fsName, err)
	})
	expectClassified(t, tenantA, configmapsPath, backstop.UID, restPLC.UID)
	checkUntouched(t, ghostBefore, "with the operator's label but no source annotation, after a deletion")

	// Once the unowned object is gone, the FlowSchema that conflicted with it is projected.
	if err := k8s.Delete(ctx, conflict); err != nil {
		t.Fatal(err)
	}
	if got := waitProjectedFS(t, "conflict"); got != conflict.Name {
		t.Errorf("FlowSchema conflict projected onto %s, want %s", got, conflict.Name)
	}
	checkOwned(t, nativeFS(t, conflict.Name), native.KindFlowSchema, "conflict")
}

// unownedFS is a native FlowSchema as a cluster admin would write it, for user at the
// precedence, on kube-apiserver's suggested level global-default.
func unownedFS(name string, precedence int32, user string, labels map[string]string) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"},
			MatchingPrecedence:         precedence,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser,
					User: &flowcontrolv1.UserSubject{Name: user}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
}

// checkUntouched fails unless the operator left the native FlowSchema before (described by
// what) as it was: the same object (UID), spec (generation), labels and annotations, and no
// field of the operator's field manager. Its resourceVersion is not compared: kube-apiserver
// itself rewrites the status (its Dangling condition, with a new transition time) when it
// digests the configuration from a stale cache, which the operator's own writes may trigger.
func checkUntouched(t testing.TB, before *flowcontrolv1.FlowSchema, what string) {
	t.Helper()
	got := nativeFS(t, before.Name)
	if got.UID != before.UID || got.Generation != before.Generation ||
		!maps.Equal(got.Labels, before.Labels) || !maps.Equal(got.Annotations, before.Annotations) {
		t.Errorf("native FlowSchema %s (%s) was changed: uid %s -> %s, generation %d -> %d, labels %v -> %v, annotations %v -> %v",
			before.Name, what, before.UID, got.UID, before.Generation, got.Generation, before.Labels, got.Labels,
			before.Annotations, got.Annotations)
	}
	for _, mf := range got.ManagedFields {
		if mf.Manager == native.FieldManager {
			t.Errorf("native FlowSchema %s (%s) has fields of the operator's field manager %s: %+v", before.Name, what,
				native.FieldManager, mf)
		}
	}
}

// expectClassified waits until a GET as the identity is classified by the native FlowSchema
// and PriorityLevelConfiguration of the given UIDs (kube-apiserver digests new native objects
// asynchronously).
func expectClassified(t testing.TB, as identity, path string, fsUID, plcUID types.UID) {
	t.Helper()
	harness.Eventually(t, waitTimeout, "the check in expectClassified", func() error {
		r := get(t, as, path)
		if r.flowSchemaUID != string(fsUID) || r.priorityLevelUID != string(plcUID) {
			return fmt.Errorf("GET %s as %v: HTTP %d, FlowSchema UID %q, PriorityLevel UID %q; want %q, %q",
				path, as, r.status, r.flowSchemaUID, r.priorityLevelUID, fsUID, plcUID)
		}
		return nil
	})
}

// mergePatch edits an object as a user would (kubectl edit), with a JSON merge patch.
func mergePatch(t testing.TB, obj client.Object, patch string) {
	t.Helper()
	if err := k8s.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch)),
		client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("patching %s: %v", obj.GetName(), err)
	}
}

// waitRestored waits until the operator has restored the native FlowSchema's precedence and
// the native level's queue length after a hand edit.
func waitRestored(t *testing.T, fsName, plcName string, precedence, queueLength int32) {
	t.Helper()
	harness.Eventually(t, waitTimeout, "the check in waitRestored", func() error {
		got := nativeFS(t, fsName)
		if got.Spec.MatchingPrecedence != precedence {
			return fmt.Errorf("native FlowSchema %s: matchingPrecedence %d, want it restored to %d", fsName,
				got.Spec.MatchingPrecedence, precedence)
		}
		gotPLC := nativePLC(t, plcName)
		if q := gotPLC.Spec.Limited.LimitResponse.Queuing.QueueLengthLimit; q != queueLength {
			return fmt.Errorf("native PriorityLevelConfiguration %s: queueLengthLimit %d, want it restored to %d",
				plcName, q, queueLength)
		}
		return nil
	})
}
