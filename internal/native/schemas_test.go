package native

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwnsPrecedence(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(fields)}
	}
	ours := `{"f:spec":{"f:matchingPrecedence":{},"f:rules":{}}}`
	withoutPrecedence := `{"f:spec":{"f:rules":{}}}`
	cases := []struct {
		name   string
		fields []metav1.ManagedFieldsEntry
		want   bool
	}{
		{"no managed fields", nil, true},
		{"applied by the operator", []metav1.ManagedFieldsEntry{entry(FieldManager, metav1.ManagedFieldsOperationApply, ours)}, true},
		{"edited by hand", []metav1.ManagedFieldsEntry{
			entry(FieldManager, metav1.ManagedFieldsOperationApply, withoutPrecedence),
			entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:matchingPrecedence":{}}}`)}, false},
		{"someone else's apply", []metav1.ManagedFieldsEntry{entry("argocd", metav1.ManagedFieldsOperationApply, ours)}, false},
	}
	cases = append(cases, []struct {
		name   string
		fields []metav1.ManagedFieldsEntry
		want   bool
	}{
		{"the operator's apply without fields, then a valid one", []metav1.ManagedFieldsEntry{
			{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply},
			entry(FieldManager, metav1.ManagedFieldsOperationApply, ours)}, true},
		{"the operator's apply with unreadable fields", []metav1.ManagedFieldsEntry{
			entry(FieldManager, metav1.ManagedFieldsOperationApply, `not json`)}, false},
		{"the operator's update, not an apply", []metav1.ManagedFieldsEntry{
			entry(FieldManager, metav1.ManagedFieldsOperationUpdate, ours)}, false},
	}...)
	for _, c := range cases {
		fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{ManagedFields: c.fields}}
		if got := ownsPrecedence(fs); got != c.want {
			t.Errorf("%s: ownsPrecedence = %v, want %v", c.name, got, c.want)
		}
		// A cache keeps only CacheManagedFields: the same answer from at most one entry.
		cached := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{ManagedFields: CacheManagedFields(fs)}}
		if got := ownsPrecedence(cached); got != c.want || len(cached.ManagedFields) > 1 {
			t.Errorf("%s: from the cached managed fields %v, ownsPrecedence = %v, want %v", c.name, cached.ManagedFields, got, c.want)
		}
	}
}
