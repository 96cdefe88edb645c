package native

import (
	"encoding/json"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// projectSchemas projects the FlowSchemas in effect, in order, then, with UnmatchedOperator,
// the catch-all backstop.
func (pr *projector) projectSchemas(cfg *effective.Config) {
	var ready []*flowcontrolv1.FlowSchema
	var sources []string
	var matchingPriorities []int32
	for _, s := range cfg.Schemas {
		fs, res := pr.schema(s, NativeName(s.Name))
		if fs == nil {
			pr.plan.FlowSchemaResults[s.Name] = res
			continue
		}
		ready, sources = append(ready, fs), append(sources, s.Name)
		matchingPriorities = append(matchingPriorities, s.MatchingPriority)
	}
	pr.placeSchemas(ready, sources, matchingPriorities)
	if pr.unmatched != UnmatchedOperator {
		return // kube-apiserver's own schemas classify what no projected FlowSchema matches
	}
	if pr.plan.FirstPrecedence >= MaxPrecedence {
		// The cluster's own schemas reach MaxPrecedence-2 or later: the backstop would not come
		// after them and the operator's route; those three of kube-apiserver's classify instead.
		return
	}
	if fs, _ := pr.schema(cfg.CatchAll, backstopName(cfg.CatchAll.Name)); fs != nil {
		fs.Spec.MatchingPrecedence = MaxPrecedence
		pr.plan.FlowSchemas = append(pr.plan.FlowSchemas, *fs)
	}
}

// schema builds the native FlowSchema of s (without its precedence), or the Result saying why
// there is none.
func (pr *projector) schema(s *effective.Schema, name string) (*flowcontrolv1.FlowSchema, Result) {
	level, ok := pr.levelNames[s.Priority]
	if !ok {
		return nil, Result{Reason: flowv1.ReasonRequestPriorityNotProjected, Message: fmt.Sprintf(
			"not projected: its RequestPriority %q is not projected (see its Projected condition)", s.Priority.Name) +
			pr.boundRefusal(s.Priority)}
	}
	if res, conflict := pr.conflict(pr.fss[name], "FlowSchema", name, s.Name); conflict {
		return nil, res
	}
	rules, errs := compileMatch(s)
	if len(errs) > 0 {
		return nil, notExpressible(errs)
	}
	fs := &flowcontrolv1.FlowSchema{
		TypeMeta:   typeMeta("FlowSchema"),
		ObjectMeta: ownedMeta(name, KindFlowSchema, s.Name),
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			DistinguisherMethod:        distinguisher(s.Distinguisher),
			Rules:                      rules,
		},
	}
	return fs, Result{}
}

// compileMatch compiles every conjunction and the distinguisher; the errors name each field
// that cannot be expressed.
func compileMatch(s *effective.Schema) ([]flowcontrolv1.PolicyRulesWithSubjects, field.ErrorList) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if d := s.Distinguisher; d != nil && d.Transformation != nil {
		errs = append(errs, field.Invalid(spec.Child("flowDistinguisher", "transformation", "regex"), d.Transformation.Regex,
			"not expressible natively: native flows are the whole user or namespace name; remove the transformation"))
	}
	var rules []flowcontrolv1.PolicyRulesWithSubjects
	b := newBounds() // one per FlowSchema: its native object lists at most maxListedValues
	for i := range s.Match {
		rule, err := compileConjunction(&s.Match[i], spec.Child("match").Index(i), b)
		switch {
		case err != nil && b.spent():
			return nil, append(errs, err) // one budget error is enough: the rest is not analyzed
		case err != nil:
			errs = append(errs, err)
		case rule != nil:
			rules = append(rules, *rule)
		}
	}
	return rules, errs
}

func distinguisher(d *flowv1.FlowDistinguisher) *flowcontrolv1.FlowDistinguisherMethod {
	if d == nil {
		return nil
	}
	t := flowcontrolv1.FlowDistinguisherMethodByUserType
	if d.Source == flowv1.SourceNamespace {
		t = flowcontrolv1.FlowDistinguisherMethodByNamespaceType
	}
	return &flowcontrolv1.FlowDistinguisherMethod{Type: t}
}

// MatchErrors lists why a FlowSchema spec cannot be projected exactly whatever its
// RequestPriority (its tests and its distinguisher); nil when it can. The webhook warns with it.
func MatchErrors(spec *flowv1.FlowSchemaSpec) field.ErrorList {
	_, errs := compileMatch(&effective.Schema{Distinguisher: spec.FlowDistinguisher, Match: spec.Match})
	return errs
}

// Managed fields for a cache of native FlowSchemas (CacheManagedFields): one entry of the
// operator's applies that owns matchingPrecedence, or one that owns nothing of the spec.
var (
	ownedPrecedenceFields = metav1.NewFieldsV1(`{"f:spec":{"f:matchingPrecedence":{}}}`)
	noPrecedenceFields    = metav1.NewFieldsV1(`{"f:spec":{}}`)
)

// CacheManagedFields returns the managed fields to keep of a native FlowSchema in a cache
// that feeds the projection: the least from which ownsPrecedence gives the same answer as
// from fs's own (nil for none; else one entry of the operator's applies, owning
// matchingPrecedence or not). The operator's apply entry lists every field it projects, a few
// hundred bytes per object that a cache of thousands would hold for this one answer. The
// returned fields are shared and must not be modified, and an object holding them must not be
// written back (the projection writes objects it builds, never cached ones).
func CacheManagedFields(fs *flowcontrolv1.FlowSchema) []metav1.ManagedFieldsEntry {
	if len(fs.ManagedFields) == 0 {
		return nil
	}
	fields := noPrecedenceFields
	if ownsPrecedence(fs) {
		fields = ownedPrecedenceFields
	}
	return []metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: fields}}
}

// ownsPrecedence reports whether the operator's field manager owns the native FlowSchema's
// matchingPrecedence: a precedence someone else wrote is not kept, so the next apply restores
// the operator's. An object without managed fields (a test's, or a cache that drops them)
// counts as owned.
func ownsPrecedence(fs *flowcontrolv1.FlowSchema) bool {
	if len(fs.ManagedFields) == 0 {
		return true
	}
	for _, mf := range fs.ManagedFields {
		if mf.Manager != FieldManager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Spec map[string]json.RawMessage `json:"f:spec"`
		}
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields) == nil {
			_, ok := fields.Spec["f:matchingPrecedence"]
			return ok
		}
	}
	return false
}
