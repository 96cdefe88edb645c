package defaults

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// jsonPatchOp is one operation of an RFC 6902 JSON patch.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// pointerEscaper escapes a map key for a JSON pointer (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// repairPatch replaces the spec, provided the object still has the given generation, the
// managed-by label and autoupdate "true".
func repairPatch(generation int64, spec any) (client.Patch, error) {
	return jsonPatch(append(ownedPreconditions(generation), jsonPatchOp{Op: "replace", Path: "/spec", Value: spec}))
}

// autoUpdatePointer is the JSON pointer of the autoupdate annotation.
var autoUpdatePointer = "/metadata/annotations/" + pointerEscaper.Replace(flowv1.AnnotationAutoUpdate)

// ownedPreconditions are the tests of a patch that applies only while the object is the one
// the plan saw: same generation, managed-by label, autoupdate "true".
func ownedPreconditions(generation int64) []jsonPatchOp {
	return []jsonPatchOp{
		{Op: "test", Path: "/metadata/generation", Value: generation},
		{Op: "test", Path: "/metadata/labels/" + pointerEscaper.Replace(flowv1.LabelManagedBy), Value: flowv1.ManagedByValue},
		{Op: "test", Path: autoUpdatePointer, Value: "true"},
	}
}

func jsonPatch(ops []jsonPatchOp) (client.Patch, error) {
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return client.RawPatch(types.JSONPatchType, data), nil
}

// handOverPatch sets the autoupdate annotation to "false", provided the object still has the
// given generation (the declared spec the plan saw), the managed-by label and autoupdate "true".
func handOverPatch(generation int64) (client.Patch, error) {
	return jsonPatch(append(ownedPreconditions(generation),
		jsonPatchOp{Op: "replace", Path: autoUpdatePointer, Value: "false"}))
}

// preconditionFailed reports whether a repair patch was refused because the object changed:
// a conflict, or HTTP 422, which is how the API server reports a failed JSON patch test (with
// a generic message). The patched object itself cannot be invalid: its tests pin the
// generation the plan saw, so only the spec changes, to a default that passes validation
// (internal/defaults tests it) at the level the object already has.
func preconditionFailed(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code == http.StatusConflict || code == http.StatusUnprocessableEntity
}
