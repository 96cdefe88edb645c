package classify

import (
	"fmt"
	"math"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Classifier classifies requests against one effective configuration. It is immutable and
// safe for concurrent use; a configuration change compiles a new one.
type Classifier struct {
	cfg *effective.Config
	// conjunctions of all schemas, in schema order then conjunction order: the number of a
	// conjunction orders it by match preference.
	conjunctions           []conjunction
	mastersDist, catchDist distinguisher
	index                  index
	// errs lists conjunctions that could not be compiled (they match nothing).
	errs []error
}

// conjunction is a compiled conjunction of atomic tests.
//
// It is 64 bytes, everything Classify reads of a matching conjunction: with thousands of
// schemas the matching one is rarely in cache, and one cache line is fetched instead of two.
type conjunction struct {
	// checks are the tests match evaluates: all of the conjunction's tests until buildIndex
	// drops the one its filing proves.
	checks []atomicTest
	schema *effective.Schema // the schema of the conjunction, an element of cfg.Schemas
	// dist is the schema's distinguisher, copied into each of its conjunctions.
	dist  distinguisher
	index int32 // index in the schema's match list
}

// accepts reports whether a conjunction that match found through the index accepts a: whether
// every check does.
func (c *conjunction) accepts(a *request.Attributes) bool {
	for i := range c.checks {
		if !c.checks[i].accepts(a) {
			return false
		}
	}
	return true
}

// Compile compiles cfg into a Classifier. cfg comes from effective.Compute; a nil cfg is the
// configuration of no objects (backstops only). Compile never fails: a conjunction it cannot
// compile (possible only in a hand-built Config) matches nothing and is listed by Errors.
func Compile(cfg *effective.Config) *Classifier {
	if cfg == nil {
		cfg = effective.Compute(nil, nil)
	}
	c := &Classifier{cfg: cfg}
	patterns := patternCache{}
	for si, s := range cfg.Schemas {
		dist := c.compileDistinguisher(s, patterns)
		for ci := range s.Match {
			c.addConjunction(si, ci, dist, patterns)
		}
	}
	c.mastersDist = c.compileDistinguisher(cfg.MastersBackstop, patterns)
	c.catchDist = c.compileDistinguisher(cfg.CatchAll, patterns)
	c.index = buildIndex(c.conjunctions)
	return c
}

// addConjunction compiles conjunction ci of schema si, whose distinguisher is dist, and
// appends it.
func (c *Classifier) addConjunction(si, ci int, dist distinguisher, patterns patternCache) {
	s := c.cfg.Schemas[si]
	if uint64(len(c.conjunctions)) >= math.MaxUint32 {
		c.errs = append(c.errs, fmt.Errorf("too many conjunctions"))
		return
	}
	tests := make([]atomicTest, 0, len(s.Match[ci].And))
	for ti := range s.Match[ci].And {
		t, err := compileAtomic(&s.Match[ci].And[ti], patterns)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("FlowSchema %q: spec.match[%d].and[%d]: %w; the conjunction matches nothing",
				s.Name, ci, ti, err))
			return
		}
		tests = append(tests, t)
	}
	c.conjunctions = append(c.conjunctions, conjunction{schema: s, dist: dist, index: int32(ci),
		checks: tests})
}

// Config returns the configuration the Classifier was compiled from.
func (c *Classifier) Config() *effective.Config { return c.cfg }

// Errors lists the conjunctions and transformations Compile could not compile; empty for any
// configuration effective.Compute returns.
func (c *Classifier) Errors() []error { return c.errs }
