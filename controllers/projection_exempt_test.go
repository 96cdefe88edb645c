package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestSnapshotSeesExemptRecord: setting or removing the record of exempt rights keeps a
// FlowSchema's generation, yet the projection reads it, so the snapshot must be recomputed;
// another annotation alone changes nothing.
func TestSnapshotSeesExemptRecord(t *testing.T) {
	fs := func(rv string, annotations map[string]string) *flowv1.FlowSchema {
		return &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "f", ResourceVersion: rv, Generation: 1,
			Annotations: annotations}}
	}
	authorized := map[string]string{flowv1.AnnotationExemptAuthorized: "true"}
	for _, c := range []struct {
		name     string
		old, cur *flowv1.FlowSchema
		same     bool
	}{
		{"record set", fs("1", nil), fs("2", authorized), false},
		{"record removed", fs("1", authorized), fs("2", nil), false},
		{"other annotation", fs("1", authorized), fs("2", map[string]string{flowv1.AnnotationExemptAuthorized: "true", "x": "y"}), true},
	} {
		if got := sameForSnapshot(c.old, c.cur, true); got != c.same {
			t.Errorf("%s: sameForSnapshot = %v, want %v", c.name, got, c.same)
		}
	}
}
