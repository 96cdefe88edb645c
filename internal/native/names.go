package native

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// FieldManager is the server-side apply field manager of every native object the operator writes.
const FieldManager = "apf-operator"

// Source kinds, as they appear in the source annotation.
const (
	KindRequestPriority = "RequestPriority"
	KindFlowSchema      = "FlowSchema"
)

// ExemptLevelName is kube-apiserver's mandatory exempt PriorityLevelConfiguration, onto which
// every level-0 RequestPriority is projected.
const ExemptLevelName = flowcontrolv1.PriorityLevelConfigurationNameExempt

// Matching precedences of projected FlowSchemas: after kube-apiserver's suggested schemas that
// protect the control plane (at most 900) and before service-accounts (9000).
const (
	// MinPrecedence is the first projected precedence unless the cluster's own schemas reach
	// MinPrecedence-1 (Existing.FirstPrecedence).
	MinPrecedence = 1000
	// MaxPrecedence is the backstop non-top-backstop's, projected with UnmatchedOperator only;
	// actual FlowSchemas take the ones below.
	MaxPrecedence = 8999
)

const (
	objectPrefix   = "apf-"
	backstopPrefix = "apf."
	maxNameLength  = 253
)

// NativeName is the name of the native object projected from the API object name.
func NativeName(name string) string { return bounded(objectPrefix + name) }

// backstopName is the name of the native object projected from a backstop: a form no API
// object's projection takes, since those all start with "apf-".
func backstopName(name string) string { return bounded(backstopPrefix + name) }

// hashLength is the length of the hash that ends a cut name: 16 hex digits, 64 bits of SHA-256.
const hashLength = 16

// nameHash is the hash that ends a cut name; tests replace it to force a collision.
var nameHash = func(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:hashLength/2])
}

// bounded keeps a name within 253 characters, ending it with a hash of the whole when cut. Two
// names that differ give one native name only if 64 bits of SHA-256 collide; the projector
// still checks (see projector.claimNames), so a collision is reported, never shared.
func bounded(name string) string {
	if len(name) <= maxNameLength {
		return name
	}
	return name[:maxNameLength-hashLength-1] + "-" + nameHash(name)
}

// Source is the value of the source annotation for an object of kind and name.
func Source(kind, name string) string { return kind + "/" + name }

// Owned reports whether a native object belongs to the operator: it carries the managed-by
// label and a source annotation. Only owned objects are ever updated or deleted.
func Owned(obj metav1.Object) bool {
	return obj.GetLabels()[flowv1.LabelManagedBy] == flowv1.ManagedByValue &&
		obj.GetAnnotations()[flowv1.AnnotationSource] != ""
}

// OwnedName reports whether name is one the projection gives its objects: it starts with
// "apf-" (an API object's projection) or "apf." (a backstop's, the operator's route).
func OwnedName(name string) bool {
	return strings.HasPrefix(name, objectPrefix) || strings.HasPrefix(name, backstopPrefix)
}

// Deletable reports whether the operator may delete a native object: it is Owned and has one
// of the projection's names. A label and annotation copied onto an administrator's object (or
// an object of another name created by hand from a projected one) never make it deletable.
func Deletable(obj metav1.Object) bool {
	return Owned(obj) && OwnedName(obj.GetName())
}

func ownedMeta(name, kind, source string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue},
		Annotations: map[string]string{flowv1.AnnotationSource: Source(kind, source)},
	}
}

// KindOf is the kind of a native object, for logs and metrics: PriorityLevelConfiguration,
// FlowSchema, or "" for anything else.
func KindOf(obj metav1.Object) string {
	switch obj.(type) {
	case *flowcontrolv1.PriorityLevelConfiguration:
		return "PriorityLevelConfiguration"
	case *flowcontrolv1.FlowSchema:
		return "FlowSchema"
	}
	return ""
}
