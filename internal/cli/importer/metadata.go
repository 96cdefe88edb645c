package importer

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// droppedKeys are the labels and annotations that describe the native object itself, not
// what it configures: kube-apiserver's, kubectl's and the operator's own. They are not carried
// over; each is named in a note.
var droppedKeys = []string{flowcontrolv1.AutoUpdateAnnotationKey, flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey,
	corev1.LastAppliedConfigAnnotation, flowv1.LabelManagedBy, flowv1.AnnotationSource}

// carryMetadata copies the labels and annotations of a native object onto the imported one,
// the dropped keys aside, and notes the keys it dropped.
func (im *importer) carryMetadata(kind string, from metav1.Object, to *metav1.ObjectMeta) {
	var dropped []string
	keep := func(m map[string]string) map[string]string {
		out := maps.Clone(m)
		maps.DeleteFunc(out, func(k, _ string) bool {
			drop := slices.Contains(droppedKeys, k)
			if drop {
				dropped = append(dropped, k)
			}
			return drop
		})
		if len(out) == 0 {
			return nil
		}
		return out
	}
	to.Labels, to.Annotations = keep(from.GetLabels()), keep(from.GetAnnotations())
	if len(dropped) > 0 {
		slices.Sort(dropped)
		im.note("%s %q: not carried over, as they describe the native object itself: %s", kind, from.GetName(),
			strings.Join(dropped, ", "))
	}
}
