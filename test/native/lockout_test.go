package native_test

import (
	"context"
	"fmt"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// TestNoLockOutNative: a FlowSchema at matchingPriority 0 matching every request sends all
// other traffic to a one-seat level in kube-apiserver, while system:masters is still classified
// by kube-apiserver's mandatory exempt FlowSchema and level, which mirror our implicit
// system-top. No projected FlowSchema can come before exempt, and a FlowSchema that would only
// send system:masters to a queued level is reported overridden and not projected.
func TestNoLockOutNative(t *testing.T) {
	resetCluster(t)
	createDefaults(t, false)
	create(t, rp("one-seat", 100, 1, 1, 0, 1))
	create(t, fs("grab-all", 0, "one-seat", apitest.And()))
	create(t, fs("masters-queued", 0, "one-seat", apitest.And(apitest.SuperSet(effective.MastersGroup))))
	startOperator(t, operatorConfig{})
	grabAll := nativeFS(t, waitProjectedFS(t, "grab-all"))
	oneSeat := nativePLC(t, waitProjectedRP(t, "one-seat"))
	waitFSReason(t, "masters-queued", flowv1.ReasonNotInEffect)
	waitReady(t, "masters-queued", flowv1.ReasonOverriddenByMastersSchema)
	waitSettled(t)

	var natives flowcontrolv1.FlowSchemaList
	list(t, &natives)
	for i := range natives.Items {
		if f := &natives.Items[i]; native.Owned(f) && (f.Spec.MatchingPrecedence <= 1 || f.Name == flowcontrolv1.FlowSchemaNameExempt) {
			t.Errorf("projected FlowSchema %s at precedence %d could shadow exempt", f.Name, f.Spec.MatchingPrecedence)
		}
	}
	expectClassified(t, identity{user: "alice"}, configmapsPath, grabAll.UID, oneSeat.UID)
	expectClassified(t, identity{user: "bob", groups: []string{"developers"}}, "/apis", grabAll.UID, oneSeat.UID)
	checkExempt(t)
}

// waitReady waits until our FlowSchema reports the Ready reason.
func waitReady(t *testing.T, name, reason string) {
	t.Helper()
	harness.Eventually(t, waitTimeout, "the check in waitReady", func() error {
		var obj flowv1.FlowSchema
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &obj); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(obj.Status.Conditions, flowv1.ConditionReady); c == nil || c.Reason != reason {
			return fmt.Errorf("FlowSchema %s: Ready %+v, want reason %s", name, c, reason)
		}
		return nil
	})
}
