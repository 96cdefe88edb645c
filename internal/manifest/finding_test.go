package manifest

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rpDoc is a valid RequestPriority.
const rpDoc = "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: p}\n" +
	"spec: {priorityLevel: 7, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1}\n"

// TestFindingWithoutPath: a field.Error with no path (a rule about the whole object) is a
// finding without a field, at the object's first key.
func TestFindingWithoutPath(t *testing.T) {
	objs, _ := Decode(Document{File: "f", Index: 0, Line: 3, Data: []byte("# c\n" + rpDoc)})
	got := FieldFindings(objs[0], field.ErrorList{field.Invalid(nil, nil, "whole object")}, nil)
	if len(got) != 1 || got[0].Field != "" || got[0].Line != 4 || got[0].Column != 1 ||
		got[0].String() != `f:4:1: Invalid value: null: whole object` {
		t.Errorf("got %+v (%s)", got, got[0].String())
	}
}
