package importer

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// ExemptName names the level-0 RequestPriority that FlowSchemas referring to kube-apiserver's
// exempt level refer to.
const ExemptName = flowcontrolv1.PriorityLevelConfigurationNameExempt

// Options control Import.
type Options struct {
	// IncludeBootstrap also imports kube-apiserver's suggested objects.
	IncludeBootstrap bool
	// Existing are the native levels that references to levels not among the inputs bind to.
	Existing Existing
}

// Skip is a native object left out by the selection rules (not a problem).
type Skip struct {
	// Kind and Name name the native object.
	Kind, Name string
	// Why is the rule that left it out.
	Why string
}

// Result is the import of a native configuration.
type Result struct {
	// RequestPriorities are ordered by priorityLevel; FlowSchemas by matchingPriority, then name.
	RequestPriorities []flowv1.RequestPriority
	FlowSchemas       []flowv1.FlowSchema
	// Sources describes, by "Kind/name" of each imported object, the native object it came from.
	Sources map[string]string
	// Skipped are the native objects the selection rules leave out.
	Skipped []Skip
	// Notes are remarks on objects imported exactly.
	Notes []string
	// Unenforced name the imported objects that will not be enforced as the native ones are
	// (a FlowSchema referring to a level that exists neither among the inputs nor in the
	// cluster or bootstrap set), and why.
	Unenforced []string
	// Problems name the native objects that could not be imported exactly, and why; each is
	// left out of the result.
	Problems []string
}

// importer holds the state of one Import.
type importer struct {
	opts    Options
	plcs    map[string]*flowcontrolv1.PriorityLevelConfiguration
	specs   map[string]*flowv1.RequestPrioritySpec // imported levels, by native name
	failed  map[string]bool                        // levels that could not be imported
	bound   map[string]string                      // bound levels -> where the native level was found
	unknown map[string]bool                        // levels referred to that exist nowhere known
	exempt  bool                                   // some imported FlowSchema refers to exempt
	res     *Result
}

// Import converts the native configuration. It never fails: what cannot be imported exactly
// is left out and named in Result.Problems.
func Import(in *Input, opts Options) *Result {
	im := &importer{opts: opts, plcs: map[string]*flowcontrolv1.PriorityLevelConfiguration{},
		specs: map[string]*flowv1.RequestPrioritySpec{}, failed: map[string]bool{}, bound: map[string]string{},
		unknown: map[string]bool{},
		res:     &Result{Sources: map[string]string{}}}
	for i := range in.PriorityLevels {
		im.plcs[in.PriorityLevels[i].Name] = &in.PriorityLevels[i]
	}
	schemas := im.selectSchemas(in.FlowSchemas)
	im.selectLevels(in.PriorityLevels, schemas)
	im.bindReferences(schemas)
	assignLevels(im.specs, schemas)
	im.addSchemas(schemas)
	im.addLevels()
	return im.res
}

// selectSchemas returns the FlowSchemas to import, in native matching order.
func (im *importer) selectSchemas(all []flowcontrolv1.FlowSchema) []*flowcontrolv1.FlowSchema {
	var out []*flowcontrolv1.FlowSchema
	for i := range all {
		fs := &all[i]
		if o := originOf(fs, suggestedSchemas); !o.imported(im.opts) {
			im.skip(kindFS, fs.Name, o)
			continue
		}
		out = append(out, fs)
	}
	slices.SortFunc(out, func(a, b *flowcontrolv1.FlowSchema) int {
		return cmp.Or(cmp.Compare(precedence(a), precedence(b)), strings.Compare(a.Name, b.Name))
	})
	return out
}

// selectLevels converts the levels to import: those the selection rules take, and those an
// imported FlowSchema refers to (the operator's own and exempt aside).
func (im *importer) selectLevels(all []flowcontrolv1.PriorityLevelConfiguration, schemas []*flowcontrolv1.FlowSchema) {
	referrer := map[string]string{} // level -> first FlowSchema referring to it
	for _, fs := range schemas {
		if ref := fs.Spec.PriorityLevelConfiguration.Name; referrer[ref] == "" {
			referrer[ref] = fs.Name
		}
	}
	for i := range all {
		plc := &all[i]
		o := originOf(plc, suggestedLevels)
		_, referred := referrer[plc.Name]
		switch {
		case plc.Name == ExemptName || o == originOperator || (!o.imported(im.opts) && !referred):
			im.skip(kindPLC, plc.Name, o)
		case bindsInstead(o):
			im.bind(plc, "the inputs ("+o.who()+")")
		default:
			im.defineLevel(plc)
		}
	}
}

// defineLevel converts a level of the inputs into the spec of a RequestPriority of its own.
func (im *importer) defineLevel(plc *flowcontrolv1.PriorityLevelConfiguration) {
	spec, err := levelSpec(plc)
	if err != nil {
		im.problem("PriorityLevelConfiguration %q: not imported: %v", plc.Name, err)
		im.failed[plc.Name] = true
		return
	}
	im.specs[plc.Name] = spec
	if spec.BorrowingLimitPercent == nil {
		im.note("PriorityLevelConfiguration %q: borrowingLimitPercent is absent, which kube-apiserver takes as no "+
			"limit; the operator projects RequestPriority %q with its default borrowingLimitPercent %d (lower where "+
			"the native borrowing budget leaves less, as its status says); set spec.borrowingLimitPercent to choose "+
			"another limit within that budget", plc.Name, plc.Name, budget.DefaultBorrowingLimitPercent)
	}
}

// addLevels adds the imported levels (and exempt, when referred to) to the result.
func (im *importer) addLevels() {
	if im.exempt {
		im.addLevel(ExemptName, &flowv1.RequestPrioritySpec{PriorityLevel: flowv1.ExemptPriorityLevel},
			"kube-apiserver's mandatory PriorityLevelConfiguration exempt")
	}
	for name, spec := range im.specs {
		source := fmt.Sprintf("PriorityLevelConfiguration %s", name)
		if where, ok := im.bound[name]; ok {
			source = fmt.Sprintf("a reference to PriorityLevelConfiguration %s, bound to that level of %s", name, where)
		}
		im.addLevel(name, spec, source)
	}
	slices.SortFunc(im.res.RequestPriorities, func(a, b flowv1.RequestPriority) int {
		return cmp.Compare(a.Spec.PriorityLevel, b.Spec.PriorityLevel)
	})
}

func (im *importer) addLevel(name string, spec *flowv1.RequestPrioritySpec, source string) {
	rp := flowv1.RequestPriority{
		TypeMeta:   metav1.TypeMeta{APIVersion: flowv1.GroupVersion.String(), Kind: native.KindRequestPriority},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       *spec,
	}
	if plc := im.plcs[name]; plc != nil && spec.NativeLevel == "" && name != ExemptName {
		im.carryMetadata(kindPLC, plc, &rp.ObjectMeta)
	}
	im.res.RequestPriorities = append(im.res.RequestPriorities, rp)
	im.res.Sources[native.KindRequestPriority+"/"+name] = source
}

func (im *importer) skip(kind, name string, o origin) {
	im.res.Skipped = append(im.res.Skipped, Skip{Kind: kind, Name: name, Why: o.why()})
}

func (im *importer) note(format string, args ...any) {
	im.res.Notes = append(im.res.Notes, fmt.Sprintf(format, args...))
}

func (im *importer) unenforced(format string, args ...any) {
	im.res.Unenforced = append(im.res.Unenforced, fmt.Sprintf(format, args...))
}

func (im *importer) problem(format string, args ...any) {
	im.res.Problems = append(im.res.Problems, fmt.Sprintf(format, args...))
}
