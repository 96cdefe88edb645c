package native

import (
	"fmt"
	"sort"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// Existing holds the native objects in the cluster, owned by the operator or not.
type Existing struct {
	PriorityLevels []flowcontrolv1.PriorityLevelConfiguration
	FlowSchemas    []flowcontrolv1.FlowSchema
	// PlannedPrecedences holds, by native name, the matching precedence a previous plan gave
	// each native FlowSchema. It stands for a FlowSchema's existing precedence while its native
	// object is not observed yet (its write is in flight), so that a plan computed before the
	// previous plan's writes are seen does not move them. Optional.
	PlannedPrecedences map[string]int32
	// Operator is the operator's own service account, whose requests the plan routes ahead of
	// every projected schema (operator_route.go); nil: no route.
	Operator *ServiceAccount
	// MaxSeatLossPercent is the most that the native levels the operator does not own may lose
	// of their share of the server (budget.New); nil means budget.DefaultMaxLossPercent.
	MaxSeatLossPercent *int32
	// ServerConcurrencyLimit is kube-apiserver's concurrency limit in seats, 0 when unknown;
	// when known, the budget also keeps the rounded seats of every level it protects.
	ServerConcurrencyLimit int64
	// Unmatched is the operator's choice (--native-unmatched) of what classifies the requests
	// no projected FlowSchema matches; "" means UnmatchedKubeAPIServer.
	Unmatched Unmatched
	// Created holds, by RequestPriority name, its creationTimestamp: after the levels already
	// projected, the share budget admits levels in creation order (budget_order.go). A name
	// absent from it counts as created at the zero time; ties are broken by name. Optional.
	Created map[string]time.Time
	// AutopilotShares are the nominal shares the autopilot applies, by RequestPriority name,
	// in place of their configured shares (the native level and the share budget use them);
	// a RequestPriority absent from it is projected with its configured shares. Optional.
	AutopilotShares map[string]int32
	// Withheld holds, by name, the FlowSchemas not to project, each with the message of its
	// Projected=False condition (reason ShadowedByNative): the operator's default FlowSchemas
	// whose projection would move requests away from kube-apiserver's own classification
	// (internal/defaults.Withheld). Optional.
	Withheld map[string]string
	// MayBindExempt reports whether the RequestPriority of that name may be bound to the exempt
	// level (spec.nativeLevel: exempt): a record of its author's exempt rights. nil: none may.
	MayBindExempt func(requestPriority string) bool
	// AssumedLevels are levels assumed to exist besides PriorityLevels, for bound levels
	// (spec.nativeLevel) only: offline validation assumes kube-apiserver's bootstrap levels. They
	// are not in the share budget. Optional.
	AssumedLevels []flowcontrolv1.PriorityLevelConfiguration
	// ExemptAuthorized is the record of exempt rights (exempt.go): a FlowSchema whose
	// RequestPriority has level 0 is projected onto the exempt level only when it says so.
	// nil: no record is checked (offline tools, whose manifests have no authors).
	ExemptAuthorized ExemptRecord
}

// Result is the projection of one RequestPriority or FlowSchema.
type Result struct {
	// Projected is true when NativeName carries exactly the object's meaning.
	Projected bool
	// Reason is one of flowv1.ReasonProjected, ReasonBound, ReasonNotExpressible,
	// ReasonNotInEffect, ReasonNameConflict, ReasonRequestPriorityNotProjected,
	// ReasonPrecedenceExhausted, ReasonOverBudget, ReasonNativeLevelNotFound,
	// ReasonNativeLevelOwned, ReasonExemptBindingNotAllowed.
	Reason  string
	Message string
	// NativeName names the native object (set only when projected).
	NativeName string
	// Errors are the field errors behind ReasonNotExpressible, one per field that cannot be
	// expressed natively (paths from spec), and behind ReasonOverBudget (the shares); nil for
	// every other reason.
	Errors field.ErrorList
}

// Plan is the projection of an effective configuration: the native objects the cluster should
// hold, the owned ones it should no longer hold, and a Result for every API object.
type Plan struct {
	// PriorityLevels and FlowSchemas are the owned native objects that should exist, by name.
	PriorityLevels []flowcontrolv1.PriorityLevelConfiguration
	FlowSchemas    []flowcontrolv1.FlowSchema
	// StalePriorityLevels and StaleFlowSchemas name owned native objects to delete.
	StalePriorityLevels []string
	StaleFlowSchemas    []string
	// Donors are the native levels the operator does not own whose object must change because
	// RequestPriorities carve shares from them (spec.sharesFrom, carve.go): taken over and
	// lowered, or restored once nothing is carved from them. Each is the live object changed.
	Donors []flowcontrolv1.PriorityLevelConfiguration
	// RequestPriorities and FlowSchemaResults hold the Result of every API object, by name.
	RequestPriorities map[string]Result
	FlowSchemaResults map[string]Result
	// OperatorRoute says whether the operator's own route (OperatorRouteName) is in the plan,
	// and why not.
	OperatorRoute Result
	// FirstPrecedence is the matching precedence of the first projected FlowSchema
	// (Existing.FirstPrecedence); the operator's route is at FirstPrecedence-1.
	FirstPrecedence int32
}

// Project computes the projection of cfg given the native objects that exist. It does not
// modify its arguments and never fails: what cannot be projected is reported in the Results.
func Project(cfg *effective.Config, existing Existing) *Plan {
	pr := &projector{
		plan: &Plan{
			RequestPriorities: make(map[string]Result, len(cfg.RequestPriorityStatus)),
			FlowSchemaResults: make(map[string]Result, len(cfg.FlowSchemaStatus)),
			FirstPrecedence:   existing.FirstPrecedence(),
		},
		levelNames:     map[*effective.Priority]string{},
		plcs:           map[string]*flowcontrolv1.PriorityLevelConfiguration{},
		fss:            map[string]*flowcontrolv1.FlowSchema{},
		planned:        existing.PlannedPrecedences,
		claims:         map[string]string{},
		budget:         shareBudget(existing),
		unmatched:      existing.Unmatched,
		backstopLevels: map[string]bool{},
		autopilot:      existing.AutopilotShares,
		withheld:       existing.Withheld,
		mayBindExempt:  existing.MayBindExempt,
		bindTargets:    map[string]*flowcontrolv1.PriorityLevelConfiguration{},
		exemptRecord:   existing.ExemptAuthorized,
		carved:         map[string]int64{},
	}
	for i := range existing.AssumedLevels {
		pr.bindTargets[existing.AssumedLevels[i].Name] = &existing.AssumedLevels[i]
	}
	for i := range existing.PriorityLevels {
		pr.plcs[existing.PriorityLevels[i].Name] = &existing.PriorityLevels[i]
		pr.bindTargets[existing.PriorityLevels[i].Name] = &existing.PriorityLevels[i]
	}
	for i := range existing.FlowSchemas {
		pr.fss[existing.FlowSchemas[i].Name] = &existing.FlowSchemas[i]
	}
	pr.notInEffect(cfg.RequestPriorityStatus, pr.plan.RequestPriorities)
	pr.notInEffect(cfg.FlowSchemaStatus, pr.plan.FlowSchemaResults)
	pr.claimNames(cfg)
	pr.created = existing.Created
	levels := pr.prepareLevels(cfg.Priorities)
	pr.admitInBudgetOrder(levels)
	for _, l := range levels {
		pr.projectLevel(l)
	}
	pr.projectSchemas(cfg)
	pr.projectOperatorRoute(existing.Operator, existing.PriorityLevels)
	pr.dropUnusedBackstopLevels()
	pr.planDonors()
	pr.findStale()
	return pr.plan
}

type projector struct {
	plan       *Plan
	levelNames map[*effective.Priority]string // native level of each projected level
	plcs       map[string]*flowcontrolv1.PriorityLevelConfiguration
	fss        map[string]*flowcontrolv1.FlowSchema
	planned    map[string]int32 // Existing.PlannedPrecedences
	// claims holds, by "<native kind>/<native name>", the API object that keeps the name when
	// several map to it.
	claims    map[string]string
	budget    budget.Budget // shares the operator's levels may take (budget.go)
	shares    int64         // shares of the levels admitted so far
	asks      []budget.Ask  // the levels admitted so far, for the borrowing rule
	created   map[string]time.Time
	unmatched Unmatched
	// backstopLevels names the native levels projected from backstops.
	backstopLevels map[string]bool
	autopilot      map[string]int32  // Existing.AutopilotShares
	withheld       map[string]string // Existing.Withheld
	mayBindExempt  func(string) bool // Existing.MayBindExempt
	exemptRecord   ExemptRecord      // Existing.ExemptAuthorized
	carved         map[string]int64  // shares admitted levels carve, by donor (carve.go)
	// bindTargets are the levels a bound level may name: PriorityLevels, then AssumedLevels.
	bindTargets map[string]*flowcontrolv1.PriorityLevelConfiguration
}

// claimNames decides, for every native name that several objects in effect map to (cut names
// whose hashes collide), which one keeps it: the first by name (API objects of one kind have
// unique names, and the effective configuration carries no creation time).
func (pr *projector) claimNames(cfg *effective.Config) {
	claim := func(kind, name, source string) {
		if held, ok := pr.claims[kind+"/"+name]; !ok || source < held {
			pr.claims[kind+"/"+name] = source
		}
	}
	for _, p := range cfg.Priorities {
		if !p.Exempt() && p.NativeLevel == "" {
			claim("PriorityLevelConfiguration", levelName(p), p.Name)
		}
	}
	for _, s := range cfg.Schemas {
		claim("FlowSchema", NativeName(s.Name), s.Name)
	}
}

// levelName is the native name of a non-exempt level.
func levelName(p *effective.Priority) string {
	if p.Backstop {
		return backstopName(p.Name)
	}
	return NativeName(p.Name)
}

func (pr *projector) notInEffect(statuses map[string]effective.Status, out map[string]Result) {
	for name, st := range statuses {
		if !st.InEffect {
			out[name] = Result{Reason: flowv1.ReasonNotInEffect, Message: fmt.Sprintf(
				"not projected: the object is not in effect (Ready reason %s)", st.Reason)}
		}
	}
}

// prepareLevels reports the exempt levels and the levels that cannot be projected (a name
// conflict, a hand kube-apiserver refuses), and returns the others, in priority order, for
// the budget to admit.
func (pr *projector) prepareLevels(priorities []*effective.Priority) []*preparedLevel {
	var out []*preparedLevel
	for _, p := range priorities {
		if l := pr.prepareLevel(p); l != nil {
			out = append(out, l)
		}
	}
	return out
}

// preparedLevel is a level that can be projected if the budget admits it.
type preparedLevel struct {
	p       *effective.Priority
	applied *effective.Priority // p with the autopilot's shares
	name    string              // its native name
	plc     *flowcontrolv1.PriorityLevelConfiguration
	// refused is the budget's Result when it does not admit the level; borrowing is the
	// borrowing limit it gives the level when it does.
	refused   *Result
	borrowing int32
}

func (pr *projector) prepareLevel(p *effective.Priority) *preparedLevel {
	if p.Exempt() {
		pr.levelNames[p] = ExemptLevelName
		pr.report(pr.plan.RequestPriorities, p.Name, p.Backstop, Result{Projected: true, Reason: flowv1.ReasonProjected,
			NativeName: ExemptLevelName, Message: "projected onto kube-apiserver's mandatory exempt " +
				"PriorityLevelConfiguration (level 0 is exempt; only that native level may be)"})
		return nil
	}
	if p.NativeLevel != "" {
		pr.projectBound(p)
		return nil
	}
	name := levelName(p)
	if p.Backstop {
		pr.backstopLevels[name] = true
	}
	if res, conflict := pr.conflict(pr.plcs[name], "PriorityLevelConfiguration", name, p.Name); conflict {
		pr.report(pr.plan.RequestPriorities, p.Name, p.Backstop, res)
		return nil
	}
	applied := pr.applied(p)
	plc, err := priorityLevel(applied, name)
	if err != nil {
		pr.report(pr.plan.RequestPriorities, p.Name, p.Backstop, notExpressible(field.ErrorList{err}))
		return nil
	}
	return &preparedLevel{p: p, applied: applied, name: name, plc: plc}
}

// projectLevel projects one prepared level, or reports why the budget refused it.
func (pr *projector) projectLevel(l *preparedLevel) {
	if l.refused != nil {
		pr.report(pr.plan.RequestPriorities, l.p.Name, l.p.Backstop, *l.refused)
		return
	}
	pr.levelNames[l.p] = l.name
	l.plc.Spec.Limited.BorrowingLimitPercent = ptr.To(l.borrowing)
	pr.plan.PriorityLevels = append(pr.plan.PriorityLevels, *l.plc)
	res := carvedNote(projected("PriorityLevelConfiguration", l.name), l.applied)
	res.Message += defaultedNote(l.applied, l.borrowing)
	res.Message = withDifferences(res.Message, LevelDifferences(l.p, l.applied))
	pr.report(pr.plan.RequestPriorities, l.p.Name, l.p.Backstop, res)
}

// applied is p with the shares the autopilot applies to it, or p itself when it applies none
// (p stays the level's identity: levelNames is keyed by it).
func (pr *projector) applied(p *effective.Priority) *effective.Priority {
	shares, ok := pr.autopilot[p.Name]
	if !ok || p.Backstop {
		return p
	}
	q := *p
	q.Shares = shares
	return &q
}

// report records a Result for an API object; backstops have none.
func (pr *projector) report(out map[string]Result, name string, backstop bool, r Result) {
	if !backstop {
		out[name] = r
	}
}

// conflict reports why the API object source cannot take the native name: another object in
// effect maps to it and keeps it, or a native object the operator does not own holds it.
func (pr *projector) conflict(obj metav1.Object, kind, name, source string) (Result, bool) {
	if held, ok := pr.claims[kind+"/"+name]; ok && held != source {
		return Result{Reason: flowv1.ReasonNameConflict, Message: fmt.Sprintf(
			"not projected: %q maps to the native %s name %q too (names over %d characters are cut and end with a "+
				"hash, and the hashes collide), and it sorts first by name, so it keeps that name; rename this object "+
				"(at most %d characters, or a different beginning)", held, kind, name, maxNameLength-len(objectPrefix),
			maxNameLength-len(objectPrefix))}, true
	}
	if obj == nil || isNil(obj) || Owned(obj) {
		return Result{}, false
	}
	return Result{Reason: flowv1.ReasonNameConflict, Message: fmt.Sprintf(
		"not projected: the %s %q exists and is not the operator's (no label %s=%s and annotation %s); "+
			"the operator never touches it: rename or delete it", kind, name, flowv1.LabelManagedBy,
		flowv1.ManagedByValue, flowv1.AnnotationSource)}, true
}

func isNil(obj metav1.Object) bool {
	switch o := obj.(type) {
	case *flowcontrolv1.PriorityLevelConfiguration:
		return o == nil
	case *flowcontrolv1.FlowSchema:
		return o == nil
	}
	return false
}

func projected(kind, name string) Result {
	return Result{Projected: true, Reason: flowv1.ReasonProjected, NativeName: name,
		Message: fmt.Sprintf("projected onto the %s %s, which kube-apiserver enforces", kind, name)}
}

func notExpressible(errs field.ErrorList) Result {
	return Result{Reason: flowv1.ReasonNotExpressible, Errors: errs, Message: "not projected, so kube-apiserver does not " +
		"enforce it: " + errs.ToAggregate().Error()}
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: flowcontrolv1.SchemeGroupVersion.String(), Kind: kind}
}

// findStale lists the owned native objects the plan no longer holds, among those with the
// projection's names only (Deletable).
func (pr *projector) findStale() {
	keepPLC := map[string]bool{}
	for _, p := range pr.plan.PriorityLevels {
		keepPLC[p.Name] = true
	}
	keepFS := map[string]bool{}
	for _, f := range pr.plan.FlowSchemas {
		keepFS[f.Name] = true
	}
	for name, obj := range pr.plcs {
		if Deletable(obj) && !keepPLC[name] {
			pr.plan.StalePriorityLevels = append(pr.plan.StalePriorityLevels, name)
		}
	}
	for name, obj := range pr.fss {
		if Deletable(obj) && !keepFS[name] {
			pr.plan.StaleFlowSchemas = append(pr.plan.StaleFlowSchemas, name)
		}
	}
	sort.Strings(pr.plan.StalePriorityLevels)
	sort.Strings(pr.plan.StaleFlowSchemas)
}
