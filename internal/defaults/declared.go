package defaults

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Declaration tells who declared an object's spec by applying a manifest (a GitOps tool,
// kubectl apply), as opposed to editing it.
type Declaration struct {
	// By names the applier for messages, e.g. `field manager "argocd-controller" (server-side apply)`.
	By string
	// SetsAutoUpdate is true when the applied manifest itself sets the autoupdate annotation:
	// the applier would then undo any value the operator writes there.
	SetsAutoUpdate bool
}

var (
	specPath       = fieldpath.MakePathOrDie("spec")
	autoUpdatePath = fieldpath.MakePathOrDie("metadata", "annotations", v1alpha1.AnnotationAutoUpdate)
)

// Declared reports whether obj's spec was declared by applying a manifest: a server-side apply
// field manager (operation Apply) owns a field of spec (Argo CD's argocd-controller, Flux's
// kustomize-controller, kubectl apply --server-side), or kubectl's client-side apply left a
// last-applied-configuration annotation holding a spec. Plain updates (kubectl edit, patch,
// the operator's own writes) declare nothing: they are drift.
func Declared(obj metav1.Object) (Declaration, bool) {
	for _, entry := range obj.GetManagedFields() {
		if entry.Operation != metav1.ManagedFieldsOperationApply || entry.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
			continue // unreadable ownership proves nothing
		}
		if set.Has(specPath) || !set.WithPrefix(specPath[0]).Empty() {
			return Declaration{
				By:             "field manager \"" + entry.Manager + "\" (server-side apply)",
				SetsAutoUpdate: set.Has(autoUpdatePath),
			}, true
		}
	}
	return clientSideApplied(obj.GetAnnotations()[corev1.LastAppliedConfigAnnotation])
}

// clientSideApplied reads kubectl's last-applied-configuration annotation: the manifest last
// applied with client-side apply, which kubectl's three-way merge keeps enforcing.
func clientSideApplied(lastApplied string) (Declaration, bool) {
	if lastApplied == "" {
		return Declaration{}, false
	}
	var manifest struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal([]byte(lastApplied), &manifest); err != nil || len(manifest.Spec) == 0 || string(manifest.Spec) == "null" {
		return Declaration{}, false
	}
	_, sets := manifest.Metadata.Annotations[v1alpha1.AnnotationAutoUpdate]
	return Declaration{
		By:             "kubectl client-side apply (annotation " + corev1.LastAppliedConfigAnnotation + ")",
		SetsAutoUpdate: sets,
	}, true
}
