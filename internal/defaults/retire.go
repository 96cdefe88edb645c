package defaults

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// retirements returns the owned FlowSchemas and RequestPriorities named as defaults of the
// other set and not of s (see Set.Plan), as copies of the actual objects. One whose spec an
// applier declared (a GitOps tool applies it from Git) is kept: deleting it would only have
// the applier create it again. A RequestPriority that a kept FlowSchema (the user's, a
// declared one, or a default of s) refers to is kept: deleting it would move that FlowSchema's
// requests.
func (s Set) retirements(rps []v1alpha1.RequestPriority, fss []v1alpha1.FlowSchema) ([]v1alpha1.FlowSchema, []v1alpha1.RequestPriority) {
	other := s.others()
	retiredFS := retiredNames(other.fsNames(), s.fsNames())
	retiredRP := retiredNames(other.rpNames(), s.rpNames())
	var outFS []v1alpha1.FlowSchema
	referred := map[string]bool{}
	for i := range fss {
		if retiredFS[fss[i].Name] && retirable(&fss[i]) {
			outFS = append(outFS, *fss[i].DeepCopy())
			continue
		}
		referred[fss[i].Spec.RequestPriority.Name] = true
	}
	var outRP []v1alpha1.RequestPriority
	for i := range rps {
		if retiredRP[rps[i].Name] && retirable(&rps[i]) && !referred[rps[i].Name] {
			outRP = append(outRP, *rps[i].DeepCopy())
		}
	}
	return outFS, outRP
}

// retirable reports whether the operator may delete obj as a retired default: it created it,
// and no applier declares its spec.
func retirable(obj metav1.Object) bool {
	_, declared := Declared(obj)
	return Owned(obj) && !declared
}

// retiredNames returns the names in other that are not in mine.
func retiredNames(other, mine map[string]bool) map[string]bool {
	out := map[string]bool{}
	for n := range other {
		if !mine[n] {
			out[n] = true
		}
	}
	return out
}
