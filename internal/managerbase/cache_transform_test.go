package managerbase

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// TestCacheTransform keeps the managedFields the operator reads and drops the others.
func TestCacheTransform(t *testing.T) {
	ours := metav1.ManagedFieldsEntry{Manager: native.FieldManager, Operation: metav1.ManagedFieldsOperationApply}
	status := metav1.ManagedFieldsEntry{Manager: "api-priority-and-fairness-config-consumer-v1",
		Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}
	user := metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}
	entries := func(e ...metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry { return e }

	userObject := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}
	userObject.ManagedFields = entries(user)
	defaultRP := defaults.RequestPriorities()[0]
	defaultRP.ManagedFields = entries(user)
	defaultFS := defaults.FlowSchemas()[0]
	defaultFS.ManagedFields = entries(user)
	userSchema := &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "svc"}}
	userSchema.ManagedFields = entries(user)
	level := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{ManagedFields: entries(ours, status)}}
	projected := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{ManagedFields: entries(status, ours)}}
	foreign := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{ManagedFields: entries(user, status)}}

	for _, c := range []struct {
		name string
		obj  metav1.Object
		want int
	}{
		{"a user's RequestPriority", userObject, 0},
		{"a user's FlowSchema", userSchema, 0},
		{"a default RequestPriority", &defaultRP, 1},
		{"a default FlowSchema", &defaultFS, 1},
		{"a native level", level, 0},
		{"a native FlowSchema of ours", projected, 1},
		{"a native FlowSchema of someone else", foreign, 1},
	} {
		if _, err := CacheTransform(c.obj); err != nil {
			t.Fatal(err)
		}
		if got := len(c.obj.GetManagedFields()); got != c.want {
			t.Errorf("%s: %d managedFields entries kept, want %d", c.name, got, c.want)
		}
	}
	if got := projected.ManagedFields[0].Manager; got != native.FieldManager {
		t.Errorf("native FlowSchema of ours: kept %s's entry, want the operator's", got)
	}
}
