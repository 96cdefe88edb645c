package importer

import (
	"errors"
	"fmt"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// addSchemas converts the selected FlowSchemas (in native order) and adds them to the result.
func (im *importer) addSchemas(schemas []*flowcontrolv1.FlowSchema) {
	for _, fs := range schemas {
		t, err := im.resolve(fs)
		if err == nil {
			err = im.addSchema(fs, t, schemas)
		}
		if err != nil {
			im.problem("FlowSchema %q: not imported: %v", fs.Name, err)
		}
	}
}

// addSchema converts one FlowSchema and adds it, or says why it cannot be.
func (im *importer) addSchema(fs *flowcontrolv1.FlowSchema, t target, schemas []*flowcontrolv1.FlowSchema) error {
	conv, err := convertSchema(fs, t)
	if err != nil {
		return err
	}
	source := fmt.Sprintf("FlowSchema %s (matchingPrecedence %d)", fs.Name, precedence(fs))
	if conv.split {
		companion := conv.schemas[1].Name
		if msgs := apimachineryvalidation.NameIsDNSSubdomain(companion, false); len(msgs) > 0 {
			return fmt.Errorf("its non-resource rules would go to FlowSchema %q (a namespace distinguisher needs "+
				"resource requests), which is not a valid name (%s); shorten the name", companion, msgs[0])
		}
		if other := sortsBetween(fs, companion, schemas); other != "" {
			return fmt.Errorf("its non-resource rules would go to FlowSchema %q (a namespace distinguisher needs "+
				"resource requests), and FlowSchema %q, of the same matchingPrecedence, would then match between "+
				"the two; rename one of them", companion, other)
		}
		im.note("FlowSchema %q: its non-resource rules are imported as FlowSchema %q, at the same matchingPriority "+
			"and without distinguisher (source namespace needs resource requests); those requests form one flow "+
			"of their own instead of sharing the flow \"\" with cluster-scoped requests", fs.Name, companion)
		im.res.Sources[native.KindFlowSchema+"/"+companion] = "the non-resource rules of " + source
	}
	for i := range conv.schemas {
		im.carryMetadata(kindFS, fs, &conv.schemas[i].ObjectMeta)
	}
	im.res.FlowSchemas = append(im.res.FlowSchemas, conv.schemas...)
	im.res.Sources[native.KindFlowSchema+"/"+fs.Name] = source
	im.exempt = im.exempt || t.name == ExemptName
	return nil
}

// sortsBetween returns a FlowSchema other than fs that is named companion, or that has fs's
// precedence and a name between fs's and companion; "" when there is none.
func sortsBetween(fs *flowcontrolv1.FlowSchema, companion string, schemas []*flowcontrolv1.FlowSchema) string {
	for _, other := range schemas {
		between := precedence(other) == precedence(fs) && other.Name >= fs.Name && other.Name <= companion
		if other != fs && (between || other.Name == companion) {
			return other.Name
		}
	}
	return ""
}

// resolve finds the RequestPriority a FlowSchema's level becomes.
func (im *importer) resolve(fs *flowcontrolv1.FlowSchema) (target, error) {
	ref := fs.Spec.PriorityLevelConfiguration.Name
	plc := im.plcs[ref]
	switch {
	case ref == ExemptName:
		return target{name: ExemptName, spec: &flowv1.RequestPrioritySpec{PriorityLevel: flowv1.ExemptPriorityLevel}}, nil
	case im.specs[ref] != nil:
		return target{name: ref, spec: im.specs[ref]}, nil
	case im.failed[ref]:
		return target{}, fmt.Errorf("its PriorityLevelConfiguration %q is not imported (see above)", ref)
	case plc == nil:
		where := "kube-apiserver's bootstrap set"
		if im.opts.Existing.Origin != "" {
			where = im.opts.Existing.Origin
		}
		im.unenforced("FlowSchema %q: its PriorityLevelConfiguration %q is neither among the inputs nor in %s; "+
			"like kube-apiserver, the operator ignores the FlowSchema until a RequestPriority %q exists (define it, "+
			"or import with --from-cluster or the --kubernetes-version of the cluster that has the level)",
			fs.Name, ref, where, ref)
		return target{name: ref}, nil
	case originOf(plc, suggestedLevels) == originOperator:
		return im.operatorLevel(fs, plc)
	}
	return target{}, fmt.Errorf("its PriorityLevelConfiguration %q is not imported", ref)
}

// operatorLevel resolves a reference to a level the operator projected: the FlowSchema refers
// to the RequestPriority it was projected from.
func (im *importer) operatorLevel(fs *flowcontrolv1.FlowSchema, plc *flowcontrolv1.PriorityLevelConfiguration) (target, error) {
	source := plc.Annotations[flowv1.AnnotationSource]
	name, ok := strings.CutPrefix(source, native.KindRequestPriority+"/")
	if !ok || name == "" {
		return target{}, errors.New("its PriorityLevelConfiguration " + plc.Name + " carries the operator's label " +
			"but no annotation " + flowv1.AnnotationSource + "=RequestPriority/<name>; refer to a RequestPriority's level")
	}
	im.note("FlowSchema %q: refers to the operator's PriorityLevelConfiguration %q, so it refers to "+
		"RequestPriority %q, its source", fs.Name, plc.Name, name)
	return target{name: name}, nil
}
