// Package effective computes the effective APF configuration: the actual RequestPriority and
// FlowSchema objects that are in effect, plus the implicit backstop objects of the proposal's
// "Default Behavior" section, with every conflict resolved deterministically.
//
// It is the one place those rules live. The filter engine builds its levels and classifier
// from a Config; the reconcilers report each object's Status from the same Config, so what
// `kubectl get apf` says is what the filter does.
//
// Rules (DESIGN.md, "Semantics"):
//   - An object whose spec breaks a stateless validation rule (stored while no webhook
//     answered) is ignored: ReasonInvalidSpec.
//   - Of valid RequestPriority objects sharing a level, the oldest (creationTimestamp, then
//     name) keeps it; the others are ignored: ReasonDuplicatePriorityLevel.
//   - Backstop RequestPriority system-top (level 0) exists while no actual object in effect has
//     level 0; backstop workload-low exists while none has a non-zero level.
//   - A FlowSchema's reference resolves against the actual objects in effect, then the backstops,
//     by name. Unresolved: the FlowSchema matches nothing (ReasonRequestPriorityNotFound, or
//     ReasonRequestPriorityNotInEffect when the named object exists but is ignored). A
//     FlowSchema whose distinguisher its RequestPriority cannot take is ignored: ReasonInvalidSpec.
//   - A request whose groups include system:masters goes to the implicit FlowSchema system-top
//     (Config.MastersBackstop) ahead of every actual FlowSchema, at the level-0 RequestPriority
//     in effect (the oldest actual one, else backstop system-top): no configuration can lock
//     administrators out (DESIGN.md; kube-apiserver's mandatory exempt FlowSchema, precedence 1,
//     does the same natively). An actual FlowSchema at a non-exempt level that matches only
//     system:masters requests would never take one; it is ignored:
//     ReasonOverriddenByMastersSchema. A
//     request no actual FlowSchema matches goes to non-top-backstop (distinguisher: user) at
//     the logically lowest effective level.
package effective

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// Names of the backstop objects.
const (
	// BackstopExemptName names the backstop level-0 RequestPriority and the backstop FlowSchema
	// for system:masters requests.
	BackstopExemptName = "system-top"
	// BackstopLowName names the backstop non-zero RequestPriority.
	BackstopLowName = "workload-low"
	// CatchAllName names the backstop FlowSchema for every other unmatched request.
	CatchAllName = "non-top-backstop"
	// MastersGroup is the group whose unmatched requests go to the exempt level.
	MastersGroup = "system:masters"
)

// Priority is a priority level in effect. Queuing fields are zero for the exempt level.
type Priority struct {
	Name             string
	Level            int32
	Shares           int32
	QueuesPerWidth   int32
	HandSize         int32
	QueueLengthLimit int32
	// LendablePercent and BorrowingLimitPercent bound lending and borrowing between levels,
	// in the in-process engine (internal/apf/dispatch) and on kube-apiserver's native level;
	// BorrowingLimitPercent nil is no limit. LendablePercent is 0 when the object leaves it
	// out, which is what the native level gets; LendableAbsent then tells the engine to lend
	// every idle seat, as the proposal's dispatching does (see internal/apf/dispatch).
	LendablePercent       int32
	LendableAbsent        bool
	BorrowingLimitPercent *int32
	// Backstop is true for an implicit backstop level (no API object).
	Backstop bool
	// NativeLevel is spec.nativeLevel: the native level this level is bound to ("" for none).
	// The queuing fields its spec leaves out hold that level's bootstrap values, else
	// kube-apiserver's v1 defaults (BoundDefaults), so the in-process engine runs it like one.
	NativeLevel string
}

// Exempt reports whether the level is exempt from queuing and limits (level 0).
func (p *Priority) Exempt() bool { return p.Level == flowv1.ExemptPriorityLevel }

// Schema is a FlowSchema in effect, with its reference resolved.
type Schema struct {
	Name             string
	MatchingPriority int32
	Priority         *Priority
	// Distinguisher is nil when the schema has no flow distinguisher.
	Distinguisher *flowv1.FlowDistinguisher
	Match         []flowv1.Conjunction
	// Backstop is true for the two implicit backstop schemas.
	Backstop bool
}

// Status is what the reconcilers report for one actual object.
type Status struct {
	// InEffect is true when the filter uses the object (Ready=True).
	InEffect bool
	// Reason is one of the flowv1.Reason* constants; Message explains it and names the fix.
	Reason  string
	Message string
	// FlowSchemas counts the FlowSchema objects that name this RequestPriority.
	FlowSchemas int32
	// AssuredFraction is shares / (100 + sum of effective shares), formatted for status;
	// empty for the exempt level and for objects not in effect.
	AssuredFraction string
}

// Config is the effective configuration. It is immutable once computed.
type Config struct {
	// Priorities are the levels in effect, logically highest (level 0) first. There is always
	// exactly one exempt level and at least one non-exempt level.
	Priorities []*Priority
	// Schemas are the actual FlowSchemas in effect, best first (matchingPriority, then name).
	Schemas []*Schema
	// MastersBackstop takes every request of system:masters members, ahead of Schemas (exempt
	// level).
	MastersBackstop *Schema
	// CatchAll takes every other unmatched request (logically lowest level).
	CatchAll *Schema
	// RequestPriorityStatus and FlowSchemaStatus hold the status of every actual object, by
	// name.
	RequestPriorityStatus map[string]Status
	FlowSchemaStatus      map[string]Status
}

// Compute returns the effective configuration of the given actual objects. It does not modify
// its arguments and never fails: invalid or conflicting objects are ignored and reported in
// the returned statuses.
func Compute(rps []flowv1.RequestPriority, fss []flowv1.FlowSchema) *Config {
	c := &Config{
		RequestPriorityStatus: make(map[string]Status, len(rps)),
		FlowSchemaStatus:      make(map[string]Status, len(fss)),
	}
	actual := c.resolvePriorities(rps)
	backstops := c.addBackstopPriorities()
	c.sortPriorities()
	c.resolveSchemas(fss, actual, backstops)
	c.addBackstopSchemas()
	c.countReferences(fss)
	c.fillAssuredFractions()
	return c
}

// resolvePriorities validates the RequestPriority objects, resolves duplicate levels and
// returns the ones in effect by name.
func (c *Config) resolvePriorities(rps []flowv1.RequestPriority) map[string]*Priority {
	ordered := make([]*flowv1.RequestPriority, 0, len(rps))
	for i := range rps {
		ordered = append(ordered, &rps[i])
	}
	sort.Slice(ordered, func(i, j int) bool { return older(ordered[i], ordered[j]) })

	inEffect := make(map[string]*Priority, len(rps))
	owners := make(map[int32]string, len(rps)) // level -> name of the object that keeps it
	for _, rp := range ordered {
		if errs := validation.RequestPrioritySpec(&rp.Spec, field.NewPath("spec")); len(errs) > 0 {
			c.RequestPriorityStatus[rp.Name] = ignored(flowv1.ReasonInvalidSpec, errs.ToAggregate().Error())
			continue
		}
		if owner, taken := owners[rp.Spec.PriorityLevel]; taken {
			c.RequestPriorityStatus[rp.Name] = ignored(flowv1.ReasonDuplicatePriorityLevel, fmt.Sprintf(
				"priorityLevel %d is also used by the older RequestPriority %q, which keeps it; "+
					"this object is ignored: delete it, or re-create it with an unused level",
				rp.Spec.PriorityLevel, owner))
			continue
		}
		owners[rp.Spec.PriorityLevel] = rp.Name
		p := priorityFromSpec(rp.Name, &rp.Spec)
		inEffect[rp.Name] = p
		c.Priorities = append(c.Priorities, p)
		c.RequestPriorityStatus[rp.Name] = Status{InEffect: true, Reason: flowv1.ReasonAccepted,
			Message: "the RequestPriority is in effect"}
	}
	return inEffect
}

// older orders objects by creationTimestamp, then name: the first one keeps a shared level.
func older(a, b *flowv1.RequestPriority) bool {
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.Name < b.Name
}

func priorityFromSpec(name string, s *flowv1.RequestPrioritySpec) *Priority {
	p := &Priority{
		Name:             name,
		Level:            s.PriorityLevel,
		Shares:           deref(s.AssuredConcurrencyShares),
		QueuesPerWidth:   deref(s.QueuesPerWidth),
		HandSize:         deref(s.HandSize),
		QueueLengthLimit: deref(s.QueueLengthLimit),
		LendablePercent:  deref(s.LendablePercent),
		LendableAbsent:   s.LendablePercent == nil,
		// copied: the Config must not share memory with the objects it was computed from
		BorrowingLimitPercent: copyPtr(s.BorrowingLimitPercent),
	}
	fillBound(p, s)
	return p
}

func copyPtr(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// addBackstopPriorities adds the backstop levels that are needed and returns them by name.
func (c *Config) addBackstopPriorities() map[string]*Priority {
	hasExempt, hasLimited := false, false
	for _, p := range c.Priorities {
		hasExempt = hasExempt || p.Exempt()
		hasLimited = hasLimited || !p.Exempt()
	}
	backstops := map[string]*Priority{}
	if !hasExempt {
		backstops[BackstopExemptName] = BackstopExemptPriority()
	}
	if !hasLimited {
		backstops[BackstopLowName] = BackstopLowPriority()
	}
	for _, name := range []string{BackstopExemptName, BackstopLowName} {
		if p, ok := backstops[name]; ok {
			c.Priorities = append(c.Priorities, p)
		}
	}
	return backstops
}

// BackstopExemptPriority returns the backstop level-0 RequestPriority (the proposal's
// system-top).
func BackstopExemptPriority() *Priority {
	return &Priority{Name: BackstopExemptName, Level: flowv1.ExemptPriorityLevel, Backstop: true}
}

// BackstopLowPriority returns the backstop non-zero RequestPriority (the proposal's
// workload-low).
func BackstopLowPriority() *Priority {
	return &Priority{Name: BackstopLowName, Level: 10000, Shares: 10, QueuesPerWidth: 128,
		HandSize: 6, QueueLengthLimit: 100, Backstop: true}
}

func (c *Config) sortPriorities() {
	sort.SliceStable(c.Priorities, func(i, j int) bool { return c.Priorities[i].Level < c.Priorities[j].Level })
}

// resolveSchemas validates each FlowSchema and resolves its reference.
func (c *Config) resolveSchemas(fss []flowv1.FlowSchema, actual, backstops map[string]*Priority) {
	for i := range fss {
		fs := &fss[i]
		st, s := c.resolveSchema(fs, actual, backstops)
		c.FlowSchemaStatus[fs.Name] = st
		if s != nil {
			c.Schemas = append(c.Schemas, s)
		}
	}
	sort.Slice(c.Schemas, func(i, j int) bool {
		a, b := c.Schemas[i], c.Schemas[j]
		if a.MatchingPriority != b.MatchingPriority {
			return a.MatchingPriority < b.MatchingPriority
		}
		return a.Name < b.Name
	})
}

func (c *Config) resolveSchema(fs *flowv1.FlowSchema, actual, backstops map[string]*Priority) (Status, *Schema) {
	spec := field.NewPath("spec")
	if errs, _ := validation.FlowSchemaSpec(&fs.Spec, spec); len(errs) > 0 {
		return ignored(flowv1.ReasonInvalidSpec, errs.ToAggregate().Error()), nil
	}
	name := fs.Spec.RequestPriority.Name
	p := actual[name]
	if p == nil {
		p = backstops[name]
	}
	if p == nil {
		if _, exists := c.RequestPriorityStatus[name]; exists {
			return ignored(flowv1.ReasonRequestPriorityNotInEffect, fmt.Sprintf(
				"RequestPriority %q exists but is not in effect (see its status); this FlowSchema "+
					"matches nothing until it is", name)), nil
		}
		return ignored(flowv1.ReasonRequestPriorityNotFound, fmt.Sprintf(
			"RequestPriority %q does not exist; this FlowSchema matches nothing and its requests "+
				"fall through to the backstops: create it or fix spec.requestPriority.name", name)), nil
	}
	if errs, _ := validation.FlowSchemaAgainstPriority(&fs.Spec, p.specForValidation(), spec); len(errs) > 0 {
		return ignored(flowv1.ReasonInvalidSpec, errs.ToAggregate().Error()), nil
	}
	if !p.Exempt() && validation.MastersOnly(fs.Spec.Match) {
		return ignored(flowv1.ReasonOverriddenByMastersSchema, fmt.Sprintf(
			"every request this FlowSchema matches is of group %s, which the implicit FlowSchema %q sends "+
				"to the exempt level ahead of every FlowSchema, so RequestPriority %q (level %d) never gets one: "+
				"refer to a level-0 RequestPriority or delete this FlowSchema", MastersGroup, BackstopExemptName,
			p.Name, p.Level)), nil
	}
	msg := fmt.Sprintf("the FlowSchema is in effect at RequestPriority %q (level %d)", p.Name, p.Level)
	if p.Backstop {
		msg += ", a backstop"
	}
	return Status{InEffect: true, Reason: flowv1.ReasonAccepted, Message: msg}, &Schema{
		Name:             fs.Name,
		MatchingPriority: fs.Spec.MatchingPriority,
		Priority:         p,
		Distinguisher:    fs.Spec.FlowDistinguisher,
		Match:            fs.Spec.Match,
	}
}

// specForValidation rebuilds the spec of a level so that validation can judge references to
// backstops as it judges references to actual objects.
func (p *Priority) specForValidation() *flowv1.RequestPrioritySpec {
	s := &flowv1.RequestPrioritySpec{PriorityLevel: p.Level}
	if !p.Exempt() {
		s.AssuredConcurrencyShares = ptr(p.Shares)
		s.QueuesPerWidth = ptr(p.QueuesPerWidth)
		s.QueueLengthLimit = ptr(p.QueueLengthLimit)
		if p.QueuesPerWidth > 1 {
			s.HandSize = ptr(p.HandSize)
		}
	}
	return s
}

func ptr(v int32) *int32 { return &v }

// addBackstopSchemas adds the two backstop FlowSchemas.
func (c *Config) addBackstopSchemas() {
	c.MastersBackstop = &Schema{Name: BackstopExemptName, Priority: c.Priorities[0], Backstop: true,
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{SuperSet: &flowv1.SetTest{
			Field: flowv1.FieldGroups, Set: []string{MastersGroup}}}}}}}
	lowest := c.Priorities[len(c.Priorities)-1]
	c.CatchAll = &Schema{Name: CatchAllName, Priority: lowest, Backstop: true,
		Distinguisher: &flowv1.FlowDistinguisher{Source: flowv1.SourceUser},
		Match:         []flowv1.Conjunction{{And: []flowv1.AtomicTest{}}}}
}

// countReferences sets FlowSchemas on every RequestPriority status.
func (c *Config) countReferences(fss []flowv1.FlowSchema) {
	counts := make(map[string]int32, len(c.RequestPriorityStatus))
	for i := range fss {
		counts[fss[i].Spec.RequestPriority.Name]++
	}
	for name, st := range c.RequestPriorityStatus {
		st.FlowSchemas = counts[name]
		c.RequestPriorityStatus[name] = st
	}
}

// fillAssuredFractions sets AssuredFraction on the status of every actual level in effect.
// The total is summed once: AssuredFraction per level would make this quadratic in the number
// of levels.
func (c *Config) fillAssuredFractions() {
	total := c.TotalShares()
	for _, p := range c.Priorities {
		if p.Backstop || p.Exempt() {
			continue
		}
		st := c.RequestPriorityStatus[p.Name]
		st.AssuredFraction = FormatFraction(assuredFraction(p, total))
		c.RequestPriorityStatus[p.Name] = st
	}
}

// TotalShares is the sum of the assured concurrency shares of every effective level.
func (c *Config) TotalShares() int64 {
	var sum int64
	for _, p := range c.Priorities {
		sum += int64(p.Shares)
	}
	return sum
}

// AssuredFraction is shares / (100 + total shares): the part of the server concurrency limit
// assured to p (0 for the exempt level).
func (c *Config) AssuredFraction(p *Priority) float64 {
	return assuredFraction(p, c.TotalShares())
}

func assuredFraction(p *Priority, totalShares int64) float64 {
	if p.Exempt() {
		return 0
	}
	return float64(p.Shares) / float64(100+totalShares)
}

// AssuredConcurrency is the proposal's ACV(l) = ceil(SCL * ACS(l) / (100 + sum ACS)), in width
// units, for a server concurrency limit scl (0 for the exempt level).
func (c *Config) AssuredConcurrency(p *Priority, scl int) int {
	if p.Exempt() {
		return 0
	}
	num := int64(scl) * int64(p.Shares)
	den := 100 + c.TotalShares()
	return int((num + den - 1) / den)
}

// FormatFraction formats an assured fraction for status and printer columns.
func FormatFraction(f float64) string {
	s := strconv.FormatFloat(f, 'f', 4, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

func ignored(reason, msg string) Status {
	return Status{Reason: reason, Message: msg}
}
