package effective

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// DigestPrefix starts every Digest: the hash function, as in an OCI digest.
const DigestPrefix = "sha256:"

// Digest returns a stable digest of what decides classification and concurrency: every level
// in effect (name, level, queuing and lending parameters) and every schema in effect (name,
// matching precedence, level, distinguisher, match), backstops included, in the Config's own
// order (level; matchingPriority, then name). Nothing else enters it: no UID,
// resourceVersion, creation time, status, or ignored object, so two clusters whose objects
// have equal specs show the same digest. Orders that do not change a schema's meaning are
// canonicalised: the values of a set test are sorted and de-duplicated, the tests of a
// conjunction and the conjunctions of a match are sorted.
func (c *Config) Digest() string {
	h := sha256.New()
	// One JSON document per line, streamed into the hash: levels, then schemas, then the two
	// backstop schemas. Encoding plain structs of strings, numbers and slices cannot fail, and
	// a hash.Hash never returns a write error.
	enc := json.NewEncoder(h)
	for _, p := range c.Priorities {
		_ = enc.Encode(digestPriorityOf(p))
	}
	_ = enc.Encode("schemas")
	for _, s := range c.Schemas {
		_ = enc.Encode(digestSchemaOf(s))
	}
	_ = enc.Encode(digestSchemaOf(c.MastersBackstop))
	_ = enc.Encode(digestSchemaOf(c.CatchAll))
	return DigestPrefix + hex.EncodeToString(h.Sum(nil))
}

// digestPriority and digestSchema are the canonical forms Digest hashes. Their JSON field
// names are part of the digest: renaming one changes every digest (and so shows drift while a
// fleet upgrades the operator, which a release note must say).
type digestPriority struct {
	Name                  string `json:"name"`
	Level                 int32  `json:"level"`
	Shares                int32  `json:"shares"`
	QueuesPerWidth        int32  `json:"queuesPerWidth"`
	HandSize              int32  `json:"handSize"`
	QueueLengthLimit      int32  `json:"queueLengthLimit"`
	LendablePercent       *int32 `json:"lendablePercent"` // nil when the object leaves it out
	BorrowingLimitPercent *int32 `json:"borrowingLimitPercent"`
	Backstop              bool   `json:"backstop"`
	// NativeLevel is left out when empty, so that unbound levels keep their digests.
	NativeLevel string `json:"nativeLevel,omitempty"`
}

type digestSchema struct {
	Name             string                    `json:"name"`
	MatchingPriority int32                     `json:"matchingPriority"`
	Priority         string                    `json:"priority"`
	Distinguisher    *flowv1.FlowDistinguisher `json:"distinguisher"`
	Match            []json.RawMessage         `json:"match"` // canonical conjunctions, sorted
	Backstop         bool                      `json:"backstop"`
}

func digestPriorityOf(p *Priority) digestPriority {
	d := digestPriority{Name: p.Name, Level: p.Level, Shares: p.Shares, QueuesPerWidth: p.QueuesPerWidth,
		HandSize: p.HandSize, QueueLengthLimit: p.QueueLengthLimit, BorrowingLimitPercent: p.BorrowingLimitPercent,
		Backstop: p.Backstop, NativeLevel: p.NativeLevel}
	if !p.LendableAbsent {
		d.LendablePercent = &p.LendablePercent
	}
	return d
}

func digestSchemaOf(s *Schema) *digestSchema {
	if s == nil {
		return nil
	}
	d := &digestSchema{Name: s.Name, MatchingPriority: s.MatchingPriority, Distinguisher: s.Distinguisher,
		Backstop: s.Backstop, Match: make([]json.RawMessage, 0, len(s.Match))}
	if s.Priority != nil {
		d.Priority = s.Priority.Name
	}
	for _, c := range s.Match {
		d.Match = append(d.Match, canonicalConjunction(c))
	}
	slices.SortFunc(d.Match, func(a, b json.RawMessage) int { return bytes.Compare(a, b) })
	return d
}

// canonicalConjunction serialises a conjunction with its tests sorted and each set sorted and
// de-duplicated: an AND of tests, and a set, mean the same in any order.
func canonicalConjunction(c flowv1.Conjunction) json.RawMessage {
	tests := make([][]byte, 0, len(c.And))
	for _, t := range c.And {
		tests = append(tests, canonicalTest(t))
	}
	slices.SortFunc(tests, bytes.Compare)
	return json.RawMessage(append(append([]byte("["), bytes.Join(tests, []byte(","))...), ']'))
}

func canonicalTest(t flowv1.AtomicTest) []byte {
	// t is a copy; its set tests are replaced (never modified: they belong to the Config).
	t.InSet, t.NotInSet = canonicalSet(t.InSet), canonicalSet(t.NotInSet)
	t.SuperSet, t.NotSuperSet = canonicalSet(t.SuperSet), canonicalSet(t.NotSuperSet)
	data, _ := json.Marshal(t)
	return data
}

// canonicalSet returns s with its values sorted and de-duplicated: s itself when they are.
func canonicalSet(s *flowv1.SetTest) *flowv1.SetTest {
	if s == nil || slices.IsSorted(s.Set) && !hasAdjacentDuplicate(s.Set) {
		return s
	}
	set := slices.Compact(slices.Sorted(slices.Values(s.Set)))
	return &flowv1.SetTest{Field: s.Field, Set: set}
}

func hasAdjacentDuplicate(sorted []string) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}
