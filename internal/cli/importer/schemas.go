package importer

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// nonResourceSuffix names the FlowSchema that takes the non-resource rules of a ByNamespace
// schema (see the package doc).
const nonResourceSuffix = "-nonresource"

// precedenceStep maps matchingPrecedence onto matchingPriority.
const precedenceStep = 1000

// target is the RequestPriority a FlowSchema's level resolves to.
type target struct {
	name string
	// spec is nil when the RequestPriority is not imported here (the operator's own, or a
	// level missing from the input).
	spec *flowv1.RequestPrioritySpec
}

// converted is the import of one native FlowSchema: one FlowSchema, or two when split.
type converted struct {
	schemas []flowv1.FlowSchema
	split   bool
}

// convertSchema imports one native FlowSchema.
func convertSchema(fs *flowcontrolv1.FlowSchema, t target) (*converted, error) {
	var res, nonRes []flowv1.Conjunction
	for i := range fs.Spec.Rules {
		r, n := ruleConjunctions(&fs.Spec.Rules[i])
		res, nonRes = append(res, r...), append(nonRes, n...)
	}
	dist, err := distinguisher(fs.Spec.DistinguisherMethod, t.spec)
	if err != nil {
		return nil, err
	}
	out := &converted{}
	main := newSchema(fs.Name, precedence(fs), t.name, dist, append(res, nonRes...))
	if dist != nil && dist.Source == flowv1.SourceNamespace && len(nonRes) > 0 {
		if len(res) == 0 {
			main.Spec.FlowDistinguisher = nil // every request has namespace "": one flow either way
		} else {
			main.Spec.Match = res
			out.split = true
		}
	}
	out.schemas = append(out.schemas, main)
	if out.split {
		out.schemas = append(out.schemas, newSchema(fs.Name+nonResourceSuffix, precedence(fs), t.name, nil, nonRes))
	}
	for i := range out.schemas {
		if err := validSchema(&out.schemas[i], t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// precedence is the schema's matchingPrecedence, with the v1 default for 0.
func precedence(fs *flowcontrolv1.FlowSchema) int32 {
	if fs.Spec.MatchingPrecedence == 0 {
		return defaultPrecedence
	}
	return fs.Spec.MatchingPrecedence
}

func newSchema(name string, prec int32, level string, dist *flowv1.FlowDistinguisher, match []flowv1.Conjunction) flowv1.FlowSchema {
	if match == nil {
		match = []flowv1.Conjunction{} // matches nothing, as the native schema
	}
	return flowv1.FlowSchema{
		TypeMeta:   metav1.TypeMeta{APIVersion: flowv1.GroupVersion.String(), Kind: kindFS},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowv1.FlowSchemaSpec{
			MatchingPriority:  prec * precedenceStep,
			RequestPriority:   flowv1.RequestPriorityReference{Name: level},
			FlowDistinguisher: dist,
			Match:             match,
		},
	}
}

// distinguisher maps the native distinguisher method; it is dropped where the level takes
// none (exempt, or a single queue), since it has no effect there natively either.
func distinguisher(m *flowcontrolv1.FlowDistinguisherMethod, level *flowv1.RequestPrioritySpec) (*flowv1.FlowDistinguisher, error) {
	if m == nil || (level != nil && !validation.AcceptsDistinguisher(level)) {
		return nil, nil
	}
	switch m.Type {
	case flowcontrolv1.FlowDistinguisherMethodByUserType:
		return &flowv1.FlowDistinguisher{Source: flowv1.SourceUser}, nil
	case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
		return &flowv1.FlowDistinguisher{Source: flowv1.SourceNamespace}, nil
	}
	return nil, fmt.Errorf("spec.distinguisherMethod.type: Unsupported value %q: want %s or %s", m.Type,
		flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.FlowDistinguisherMethodByNamespaceType)
}

// validSchema checks the imported FlowSchema with the admission rules.
func validSchema(fs *flowv1.FlowSchema, t target) error {
	spec := field.NewPath("spec")
	errs, _ := validation.FlowSchemaSpec(&fs.Spec, spec)
	if t.spec != nil {
		more, _ := validation.FlowSchemaAgainstPriority(&fs.Spec, t.spec, spec)
		errs = append(errs, more...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("the FlowSchema %q it would become is invalid (%v); split the native FlowSchema "+
			"into smaller ones", fs.Name, errs.ToAggregate())
	}
	return nil
}
