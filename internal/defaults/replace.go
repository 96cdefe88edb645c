package defaults

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Reasons of Blocked: the Event reason under which the reconciler reports each.
const (
	// ReasonRepairBlocked: a drifted owned default that no update may or can repair.
	ReasonRepairBlocked = "RepairBlocked"
	// ReasonReplaceBlocked: an unbound owned default RequestPriority kept as it is because
	// FlowSchemas of the user refer to it (sparedReplacements).
	ReasonReplaceBlocked = "ReplaceBlocked"
)

// sparedReplacements splits the unbound owned defaults (requestPriorityRepairs' replacements)
// into those to replace and those to keep. Replacing binds the RequestPriority to a
// kube-apiserver level, so it moves every FlowSchema that refers to it off the level the
// RequestPriority has now. For the operator's own default FlowSchemas that is the upgrade's
// intent; a user's FlowSchema would lose the concurrency it has without the user choosing it.
// So a RequestPriority that a FlowSchema other than the operator's own defaults refers to is
// kept (unbound, projected as before) and reported, until no such FlowSchema remains.
func (s Set) sparedReplacements(olds []v1alpha1.RequestPriority, fss []v1alpha1.FlowSchema) (replace []v1alpha1.RequestPriority, kept []Blocked) {
	for i := range olds {
		referrers := s.userReferrers(olds[i].Name, fss)
		if len(referrers) == 0 {
			replace = append(replace, olds[i])
			continue
		}
		kept = append(kept, keptUnbound(&olds[i], referrers))
	}
	return replace, kept
}

// userReferrers returns, sorted, the names of the FlowSchemas among fss that refer to the
// RequestPriority rp and are not the operator's own defaults (operatorsOwn).
func (s Set) userReferrers(rp string, fss []v1alpha1.FlowSchema) []string {
	var out []string
	for i := range fss {
		if fss[i].Spec.RequestPriority.Name == rp && !s.operatorsOwn(&fss[i]) {
			out = append(out, fss[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// operatorsOwn reports whether fs is one of the operator's default FlowSchemas and stays so:
// a default's name, owned (Owned), and not about to be handed over to the user because an
// applier declared a spec other than the default's (flowSchemaRepairs).
func (s Set) operatorsOwn(fs *v1alpha1.FlowSchema) bool {
	if !Owned(fs) {
		return false
	}
	for _, d := range s.fss {
		if d.name != fs.Name {
			continue
		}
		if equality.Semantic.DeepEqual(fs.Spec, d.spec) {
			return true
		}
		_, declared := Declared(fs)
		return !declared
	}
	return false
}

// keptUnbound is the report of an unbound default RequestPriority kept for the user's
// FlowSchemas that refer to it.
func keptUnbound(rp *v1alpha1.RequestPriority, referrers []string) Blocked {
	bound, _ := RequestPriority(rp.Name)
	return Blocked{Kind: "RequestPriority", Name: rp.Name, Reason: ReasonReplaceBlocked, Message: fmt.Sprintf(
		"RequestPriority %s was created before the defaults were bound: binding it to kube-apiserver's level %s means "+
			"deleting and creating it again (nativeLevel is immutable), which would move the requests of FlowSchema %s "+
			"(not the operator's defaults) off the level they have now; so the operator keeps it as it is (unbound). "+
			"To have it bound, point those FlowSchemas at another RequestPriority: the operator then replaces it. "+
			"To keep it unbound for good, set annotation %s to \"false\"",
		rp.Name, bound.Spec.NativeLevel, strings.Join(referrers, ", "), v1alpha1.AnnotationAutoUpdate)}
}
