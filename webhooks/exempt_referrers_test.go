package webhooks

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestExemptBackDoorClosed is the back door of issue 24 on a real kube-apiserver: a user in no
// exempt group creates a FlowSchema referring to a RequestPriority that does not exist yet
// (admitted with a warning); an administrator's later create of that name at level 0 is
// refused, naming the FlowSchema and the fix, while a referrer carrying the record of exempt
// rights (written by an administrator) does not block; once the unchecked FlowSchema is gone
// the create is admitted.
func TestExemptBackDoorClosed(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	s.grantAPFWriter(t, "mallory")
	dev, warnings := s.clientAs(t, "mallory", []string{"developers"})
	s.noLevelZero(t)
	const target = "it-backdoor-rp"

	unchecked := flowSchema("it-backdoor", target, nil)
	if err := dev.Create(ctx, unchecked); err != nil {
		t.Fatalf("A FlowSchema referring to a missing RequestPriority must be admitted: %v", err)
	}
	if got := warnings.take(); len(got) == 0 || !strings.HasPrefix(got[0], `spec.requestPriority.name: RequestPriority "`+target+`" not found`) {
		t.Errorf("warnings = %q, want first the missing RequestPriority", got)
	}
	reserved := flowSchema("system-it-backdoor", target, nil)
	reserved.Annotations = map[string]string{v1alpha1.AnnotationExemptAuthorized: "true"}
	if err := s.admin.Create(ctx, reserved); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, unchecked)
	s.waitCached(t, reserved)

	levelZero := &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: target}}
	err := s.admin.Create(ctx, levelZero.DeepCopy())
	assertInvalid(t, err, field.ErrorTypeForbidden, "spec.priorityLevel",
		`FlowSchema "it-backdoor" refer(s) to RequestPriority "`+target+`" and would become exempt at level 0`)
	assertInvalid(t, err, field.ErrorTypeForbidden, "spec.priorityLevel",
		`have an exempt-allowed user set the annotation flowcontrol.apf-operator.io/exempt-authorized: "true" on them`)
	if strings.Contains(err.Error(), "system-it-backdoor") {
		t.Errorf("a referrer with the record of exempt rights must not be named: %v", err)
	}

	// Levels are immutable: the update to 0 is refused (by the CRD's rule, before the webhook).
	queued := queuedRP(target, 5900, 1, 0)
	if err := s.admin.Create(ctx, queued); err != nil {
		t.Fatalf("a non-zero level must be admitted whatever refers to it: %v", err)
	}
	s.waitCached(t, queued)
	queued.Spec = v1alpha1.RequestPrioritySpec{}
	if err := s.admin.Update(ctx, queued); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.priorityLevel") {
		t.Fatalf("update to level 0 = %v, want refused on spec.priorityLevel", err)
	}
	s.deleteAndWait(t, queued)

	s.deleteAndWait(t, unchecked)
	if err := s.admin.Create(ctx, levelZero); err != nil {
		t.Fatalf("with only a recorded referrer left, level 0 must be admitted: %v", err)
	}
	s.deleteAndWait(t, reserved)
	s.deleteAndWait(t, levelZero) // leaves no level-0 object, as the other tests expect
}

// noLevelZero deletes whatever level-0 RequestPriority an earlier test left.
func (s *suite) noLevelZero(t *testing.T) {
	t.Helper()
	var list v1alpha1.RequestPriorityList
	if err := s.admin.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if rp := &list.Items[i]; rp.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
			s.deleteAndWait(t, rp)
		}
	}
}

// deleteAndWait deletes obj as the admin and waits until the webhooks' cache no longer holds it.
func (s *suite) deleteAndWait(t *testing.T, obj client.Object) {
	t.Helper()
	if err := s.admin.Delete(context.Background(), obj); err != nil {
		t.Fatalf("deleting %s: %v", obj.GetName(), err)
	}
	s.waitGone(t, obj)
}
