package webhooks

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// suiteExemptGroup is the second exempt group the suite's webhooks allow besides system:masters.
const suiteExemptGroup = "apf-admins"

// TestLevelZeroDeleteGuard deletes level-0 objects as a user whom RBAC allows to delete APF
// objects but who is in no exempt group (denied by the webhook), as a member of an exempt group
// and as system:masters (both allowed).
func TestLevelZeroDeleteGuard(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	s.grantAPFWriter(t, "deleter")
	s.grantAPFWriter(t, "carol")
	dev, _ := s.clientAs(t, "deleter", []string{"developers"})
	member, _ := s.clientAs(t, "carol", []string{suiteExemptGroup})

	top := s.levelZero(t)
	exemptSchema := flowSchema("it-del-exempt", top.Name, nil)
	if err := s.admin.Create(ctx, exemptSchema); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, exemptSchema)

	assertInvalid(t, dev.Delete(ctx, top), field.ErrorTypeForbidden, "spec.priorityLevel",
		`user "deleter" may not delete RequestPriority "`+top.Name+`" at the exempt level 0: only members of groups system:masters, apf-admins`)
	assertInvalid(t, dev.Delete(ctx, exemptSchema), field.ErrorTypeForbidden, "spec.requestPriority.name",
		`user "deleter" may not delete FlowSchema "it-del-exempt", which refers to RequestPriority "`+top.Name+`" at the exempt level 0`)
	s.assertExists(t, top)

	if err := member.Delete(ctx, exemptSchema); err != nil {
		t.Fatalf("A member of %s must be allowed to delete a FlowSchema at the exempt level: %v", suiteExemptGroup, err)
	}
	if err := member.Delete(ctx, top); err != nil {
		t.Fatalf("A member of %s must be allowed to delete a level-0 RequestPriority: %v", suiteExemptGroup, err)
	}
	s.waitGone(t, top)
	again := s.levelZero(t)
	if err := s.admin.Delete(ctx, again); err != nil {
		t.Fatalf("system:masters must be allowed to delete a level-0 RequestPriority: %v", err)
	}
	s.waitGone(t, again) // leaves no level-0 object, as the other tests expect
}

// TestReservedPrefixGuard checks that only the exempt groups may create, update or delete
// objects named with the reserved system- prefix, whatever their level.
func TestReservedPrefixGuard(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	s.grantAPFWriter(t, "squatter")
	dev, _ := s.clientAs(t, "squatter", []string{"developers"})

	err := dev.Create(ctx, queuedRP("system-squat", 5800, 1, 0))
	assertInvalid(t, err, field.ErrorTypeForbidden, "metadata.name",
		`user "squatter" may not create RequestPriority "system-squat": names starting with "system-" are reserved`)
	err = dev.Create(ctx, flowSchema("system-squat", "it-valid", nil))
	assertInvalid(t, err, field.ErrorTypeForbidden, "metadata.name",
		`user "squatter" may not create FlowSchema "system-squat"`)

	reserved := queuedRP("system-it-reserved", 5810, 1, 0)
	if err := s.admin.Create(ctx, reserved); err != nil {
		t.Fatalf("system:masters must be allowed a reserved name: %v", err)
	}
	s.waitCached(t, reserved)
	reserved.Labels = map[string]string{"owner": "squatter"}
	assertInvalid(t, dev.Update(ctx, reserved), field.ErrorTypeForbidden, "metadata.name",
		`user "squatter" may not update RequestPriority "system-it-reserved"`)
	assertInvalid(t, dev.Delete(ctx, reserved), field.ErrorTypeForbidden, "metadata.name",
		`user "squatter" may not delete RequestPriority "system-it-reserved"`)
	if err := s.admin.Delete(ctx, reserved); err != nil {
		t.Fatalf("system:masters must be allowed to delete a reserved name: %v", err)
	}
}

// levelZero returns the level-0 RequestPriority the admin created for the test, after deleting
// whatever level-0 object an earlier test left (levels are unique in the shared API server).
func (s *suite) levelZero(t *testing.T) *v1alpha1.RequestPriority {
	t.Helper()
	ctx := context.Background()
	var list v1alpha1.RequestPriorityList
	if err := s.admin.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if rp := &list.Items[i]; rp.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
			if err := s.admin.Delete(ctx, rp); err != nil {
				t.Fatal(err)
			}
			s.waitGone(t, rp)
		}
	}
	top := &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "it-del-top"}}
	if err := s.admin.Create(ctx, top); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, top)
	return top
}

// assertExists fails unless obj is still stored.
func (s *suite) assertExists(t *testing.T, obj client.Object) {
	t.Helper()
	got := obj.DeepCopyObject().(client.Object)
	if err := s.admin.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatalf("%s must still exist: %v", obj.GetName(), err)
	}
}

// waitGone waits until the manager's cache no longer holds obj.
func (s *suite) waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	got := obj.DeepCopyObject().(client.Object)
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := s.cache.Get(context.Background(), client.ObjectKeyFromObject(obj), got)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache still holds %s: %v", obj.GetName(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
