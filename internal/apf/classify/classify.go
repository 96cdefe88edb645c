package classify

import (
	"slices"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Result is the classification of one request.
type Result struct {
	// Schema is the best matching FlowSchema, or a backstop; never nil. Schema.Priority is the
	// request's RequestPriority.
	Schema *effective.Schema
	// Conjunction is the index in Schema.Match of the first conjunction that accepted the
	// request; -1 for a backstop.
	Conjunction int
	// Distinguisher is the flow distinguisher.
	Distinguisher string
	// Width is 1 for get, list and watch, 2 otherwise.
	Width int
	// LongRunning is true for requests that are not flow-controlled (watch, proxy, exec,
	// attach, port-forward, followed log).
	LongRunning bool
	// FlowHash is the shuffle-sharding hash of (Schema.Name, Distinguisher).
	FlowHash uint64
}

// Classify classifies a into out. It allocates nothing in the common case (see the package
// documentation).
func (c *Classifier) Classify(a *request.Attributes, out *Result) {
	var uh userHash
	schema, conj, dist := c.schemaOf(a, &uh)
	d := dist.of(a)
	// Every field is set, one by one: a composite literal would be built in a temporary and
	// copied, which costs more than the rest of the assignment.
	out.Schema = schema
	out.Conjunction = conj
	out.Distinguisher = d
	out.Width = Width(a)
	out.LongRunning = a.IsLongRunning()
	out.FlowHash = dist.hash(d, &uh)
}

// schemaOf returns the best matching schema, the matching conjunction (-1 for a backstop) and
// the schema's distinguisher; uh as match leaves it.
// A member of system:masters goes to the exempt level ahead of every FlowSchema, so that no
// configuration can lock the cluster's administrators out (kube-apiserver's mandatory exempt
// FlowSchema does the same natively).
func (c *Classifier) schemaOf(a *request.Attributes, uh *userHash) (*effective.Schema, int, *distinguisher) {
	if slices.Contains(a.Groups, effective.MastersGroup) {
		return c.cfg.MastersBackstop, -1, &c.mastersDist
	}
	if id := c.match(a, uh); id >= 0 {
		cj := &c.conjunctions[id]
		return cj.schema, int(cj.index), &cj.dist
	}
	return c.cfg.CatchAll, -1, &c.catchDist
}

// Width returns the width of a request: 1 for read-only verbs (get, list, watch), 2 otherwise.
func Width(a *request.Attributes) int {
	if a.IsReadOnly() {
		return 1
	}
	return 2
}
