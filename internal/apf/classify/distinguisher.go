package classify

import (
	"fmt"
	"hash/maphash"
	"regexp"
	"sync/atomic"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

// distinguisher computes the flow distinguisher of one FlowSchema.
type distinguisher struct {
	transform *transform                 // nil without transformation
	hasher    shufflesharding.FlowHasher // has hashed the schema name
	source    source
}

// source is a distinguisher source, compiled from flowv1.DistinguisherSource so that Classify
// tests an integer rather than a string.
type source uint8

const (
	sourceNone source = iota // the schema has no distinguisher (or an unknown source)
	sourceUser
	sourceNamespace
)

// hash returns the flow hash of the schema's flow with distinguisher dist, reusing the hash of
// the user name when dist is that name, untransformed.
func (d *distinguisher) hash(dist string, uh *userHash) uint64 {
	if uh.ok && d.source == sourceUser && d.transform == nil {
		return d.hasher.Combine(uh.h)
	}
	return d.hasher.Hash(dist)
}

// of returns the distinguisher of a: the user or the namespace ("" when absent), transformed.
func (d *distinguisher) of(a *request.Attributes) string {
	var v string
	switch d.source {
	case sourceUser:
		v = a.User
	case sourceNamespace:
		if !a.ResourceRequest {
			return ""
		}
		v = a.Namespace
	default:
		return ""
	}
	if d.transform != nil {
		return d.transform.apply(v)
	}
	return v
}

// compileDistinguisher compiles the distinguisher of s (nil s: none).
func (c *Classifier) compileDistinguisher(s *effective.Schema, patterns patternCache) distinguisher {
	if s == nil {
		return distinguisher{}
	}
	hasher := shufflesharding.NewFlowHasher(s.Name)
	d := distinguisher{hasher: hasher}
	if s.Distinguisher == nil {
		return d
	}
	switch s.Distinguisher.Source {
	case flowv1.SourceUser:
		d.source = sourceUser
	case flowv1.SourceNamespace:
		d.source = sourceNamespace
	default:
		c.errs = append(c.errs, fmt.Errorf("FlowSchema %q: unknown distinguisher source %q; its flows are not distinguished",
			s.Name, s.Distinguisher.Source))
		return d
	}
	if tr := s.Distinguisher.Transformation; tr != nil {
		re, err := patterns.compile(tr.Regex)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("FlowSchema %q: transformation: %w; its distinguisher is always empty",
				s.Name, err))
			re = nil
		}
		d.transform = &transform{re: re, seed: maphash.MakeSeed()}
	}
	return d
}

// memoSlots is the size of a transformation's cache of recent results.
const memoSlots = 256

// transform applies a transformation: a complete match of re yields submatch 1, anything else
// "". Recent results are cached in a direct-mapped, lock-free table because the regexp package
// allocates the submatch indices on every call.
type transform struct {
	re    *regexp.Regexp // anchored; nil: always ""
	seed  maphash.Seed
	memos [memoSlots]atomic.Pointer[memo]
}

type memo struct{ in, out string }

func (t *transform) apply(s string) string {
	if t.re == nil {
		return ""
	}
	slot := &t.memos[maphash.String(t.seed, s)%memoSlots]
	if m := slot.Load(); m != nil && m.in == s {
		return m.out
	}
	out := ""
	if loc := t.re.FindStringSubmatchIndex(s); len(loc) >= 4 && loc[2] >= 0 {
		out = s[loc[2]:loc[3]]
	}
	slot.Store(&memo{in: s, out: out})
	return out
}
