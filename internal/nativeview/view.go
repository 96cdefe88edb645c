package nativeview

import (
	"slices"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// View is a set of native FlowSchemas and priority levels, ordered once as kube-apiserver
// orders them. It is immutable: every method may be called concurrently.
type View struct {
	// Origin says where the objects come from, for people ("the live cluster", ...).
	Origin string
	// SeatsError says why nominal seats are unknown (FromCluster could not read /metrics);
	// nil when they are known or were not asked for.
	SeatsError error
	// schemas are the FlowSchemas in kube-apiserver's order, dangling ones dropped.
	schemas []*flowcontrolv1.FlowSchema
	// all are every FlowSchema given (WithProjection starts from them).
	all    []flowcontrolv1.FlowSchema
	levels map[string]*flowcontrolv1.PriorityLevelConfiguration
	// serverSeats is kube-apiserver's concurrency limit in seats, 0 when unknown.
	serverSeats int64
	// levelSeats are the nominal seats kube-apiserver reports for its levels (its /metrics),
	// by level name; they win over the computed value for the levels they name.
	levelSeats map[string]int64
	shareSum   int64
}

// New returns the view of the given objects. serverSeats is kube-apiserver's concurrency
// limit in seats (0: unknown, and nominal seats are unknown). Like kube-apiserver, it supplies
// the mandatory exempt and catch-all objects when they are absent and ignores FlowSchemas whose
// priority level does not exist. New copies its arguments.
func New(origin string, schemas []flowcontrolv1.FlowSchema, levels []flowcontrolv1.PriorityLevelConfiguration,
	serverSeats int64) *View {
	v := &View{Origin: origin, all: deepCopySchemas(schemas), serverSeats: serverSeats,
		levels: make(map[string]*flowcontrolv1.PriorityLevelConfiguration, len(levels)+2)}
	for i := range levels {
		v.levels[levels[i].Name] = levels[i].DeepCopy()
	}
	for _, l := range bootstrapset.MandatoryPriorityLevels() {
		if _, ok := v.levels[l.Name]; !ok {
			v.levels[l.Name] = &l
		}
	}
	for _, l := range v.levels {
		v.shareSum += int64(budget.Shares(l))
	}
	v.order()
	return v
}

// order sorts the schemas that kube-apiserver uses: those whose level exists, plus the
// mandatory exempt and catch-all when absent, by matchingPrecedence then name.
func (v *View) order() {
	has := map[string]bool{}
	for i := range v.all {
		fs := &v.all[i]
		has[fs.Name] = true
		if _, ok := v.levels[fs.Spec.PriorityLevelConfiguration.Name]; ok {
			v.schemas = append(v.schemas, fs)
		}
	}
	for _, fs := range bootstrapset.MandatoryFlowSchemas() {
		if !has[fs.Name] {
			v.schemas = append(v.schemas, &fs)
		}
	}
	slices.SortStableFunc(v.schemas, func(a, b *flowcontrolv1.FlowSchema) int {
		if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
			return int(a.Spec.MatchingPrecedence) - int(b.Spec.MatchingPrecedence)
		}
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
}

// Ref names one native object.
type Ref struct {
	Name string    `json:"name"`
	UID  types.UID `json:"uid,omitempty"`
}

// Answer is kube-apiserver's classification of one request.
type Answer struct {
	// Classified is false for the long-running requests kube-apiserver serves unclassified
	// (native.Classified); every other field is then empty.
	Classified bool `json:"classified"`
	// FlowSchema is the first FlowSchema that matches; Precedence its matchingPrecedence.
	FlowSchema Ref   `json:"flowSchema"`
	Precedence int32 `json:"matchingPrecedence,omitempty"`
	// Fallback is true when no FlowSchema matched and kube-apiserver fell back to catch-all
	// (possible only for a request without system:authenticated or system:unauthenticated).
	Fallback bool `json:"fallback,omitempty"`
	// PriorityLevel is the FlowSchema's level; Exempt tells an exempt level.
	PriorityLevel Ref  `json:"priorityLevel"`
	Exempt        bool `json:"exempt,omitempty"`
	// NominalSeats is the level's nominal concurrency limit in seats; nil when unknown (the
	// server's concurrency limit could not be read). ServerSeats is that limit (0: unknown).
	NominalSeats *int64 `json:"nominalSeats,omitempty"`
	ServerSeats  int64  `json:"serverSeats,omitempty"`
	// DistinguisherMethod is ByUser, ByNamespace or "" (none); Distinguisher its value.
	DistinguisherMethod string `json:"distinguisherMethod,omitempty"`
	Distinguisher       string `json:"distinguisher"`
	// Source is the operator's source annotation ("FlowSchema/<name>", ...) when the operator
	// owns the FlowSchema; empty for kube-apiserver's own and everyone else's.
	Source string `json:"source,omitempty"`
}

// Classify returns kube-apiserver's answer for a, whose Groups must already hold the implicit
// groups (see Groups).
func (v *View) Classify(a *request.Attributes) Answer {
	if !native.Classified(a) {
		return Answer{}
	}
	ans := Answer{Classified: true, ServerSeats: v.serverSeats}
	fs := v.match(a)
	if fs == nil {
		ans.Fallback = true
		fs = bootstrapset.CatchAll()
	}
	ans.FlowSchema = Ref{Name: fs.Name, UID: fs.UID}
	ans.Precedence = fs.Spec.MatchingPrecedence
	if native.Owned(fs) {
		ans.Source = fs.Annotations[flowv1.AnnotationSource]
	}
	if m := fs.Spec.DistinguisherMethod; m != nil {
		ans.DistinguisherMethod = string(m.Type)
		ans.Distinguisher = distinguisher(m.Type, a)
	}
	if l := v.levels[fs.Spec.PriorityLevelConfiguration.Name]; l != nil {
		ans.PriorityLevel = Ref{Name: l.Name, UID: l.UID}
		ans.Exempt = l.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt
		ans.NominalSeats = v.NominalSeats(l.Name)
	}
	return ans
}

// match returns the first FlowSchema that matches a, nil when none does.
func (v *View) match(a *request.Attributes) *flowcontrolv1.FlowSchema {
	for _, fs := range v.schemas {
		if native.Matches(fs, a) {
			return fs
		}
	}
	return nil
}

// distinguisher is kube-apiserver's computeFlowDistinguisher.
func distinguisher(t flowcontrolv1.FlowDistinguisherMethodType, a *request.Attributes) string {
	switch t {
	case flowcontrolv1.FlowDistinguisherMethodByUserType:
		return a.User
	case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
		if a.ResourceRequest {
			return a.Namespace
		}
	}
	return ""
}

// NominalSeats returns the nominal seats of level: the value kube-apiserver reported for it,
// else ceil(serverSeats * shares / sum of all levels' shares) as kube-apiserver computes it;
// nil when the level does not exist or the server's limit is unknown.
func (v *View) NominalSeats(level string) *int64 {
	l, ok := v.levels[level]
	if !ok {
		return nil
	}
	if n, ok := v.levelSeats[level]; ok {
		return &n
	}
	if v.serverSeats <= 0 || v.shareSum <= 0 {
		return nil
	}
	n := budget.Seats(v.serverSeats, int64(budget.Shares(l)), v.shareSum)
	return &n
}

// ServerSeats is kube-apiserver's concurrency limit in seats, 0 when unknown.
func (v *View) ServerSeats() int64 { return v.serverSeats }

// FlowSchemas returns the FlowSchemas kube-apiserver uses, in its order (deep copies).
func (v *View) FlowSchemas() []flowcontrolv1.FlowSchema {
	out := make([]flowcontrolv1.FlowSchema, len(v.schemas))
	for i, fs := range v.schemas {
		out[i] = *fs.DeepCopy()
	}
	return out
}

// PriorityLevels returns the view's priority levels, by name (deep copies).
func (v *View) PriorityLevels() []flowcontrolv1.PriorityLevelConfiguration {
	out := make([]flowcontrolv1.PriorityLevelConfiguration, 0, len(v.levels))
	for _, l := range v.levels {
		out = append(out, *l.DeepCopy())
	}
	slices.SortFunc(out, func(a, b flowcontrolv1.PriorityLevelConfiguration) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

func deepCopySchemas(in []flowcontrolv1.FlowSchema) []flowcontrolv1.FlowSchema {
	out := make([]flowcontrolv1.FlowSchema, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
