package effective

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

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
	canonical := digestConfig{MastersBackstop: digestSchemaOf(c.MastersBackstop), CatchAll: digestSchemaOf(c.CatchAll)}
	for _, p := range c.Priorities {
		canonical.Priorities = append(canonical.Priorities, digestPriorityOf(p))
	}
	for _, s := range c.Schemas {
		canonical.Schemas = append(canonical.Schemas, *digestSchemaOf(s))
	}
	// Marshalling plain structs of strings, numbers and slices cannot fail.
	data, _ := json.Marshal(canonical)
	sum := sha256.Sum256(data)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// digestConfig is the canonical form of a Config that Digest hashes. Its JSON field names are
// part of the digest: renaming one changes every digest (and so shows drift while a fleet
// upgrades the operator, which a release note must say).
type digestConfig struct {
	Priorities      []digestPriority `json:"priorities"`
	Schemas         []digestSchema   `json:"schemas"`
	MastersBackstop *digestSchema    `json:"mastersBackstop"`
	CatchAll        *digestSchema    `json:"catchAll"`
}

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
}

type digestSchema struct {
	Name             string                    `json:"name"`
	MatchingPriority int32                     `json:"matchingPriority"`
	Priority         string                    `json:"priority"`
	Distinguisher    *flowv1.FlowDistinguisher `json:"distinguisher"`
	Match            []string                  `json:"match"` // canonical conjunctions, sorted
	Backstop         bool                      `json:"backstop"`
}

func digestPriorityOf(p *Priority) digestPriority {
	d := digestPriority{Name: p.Name, Level: p.Level, Shares: p.Shares, QueuesPerWidth: p.QueuesPerWidth,
		HandSize: p.HandSize, QueueLengthLimit: p.QueueLengthLimit, BorrowingLimitPercent: p.BorrowingLimitPercent,
		Backstop: p.Backstop}
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
		Backstop: s.Backstop, Match: make([]string, 0, len(s.Match))}
	if s.Priority != nil {
		d.Priority = s.Priority.Name
	}
	for _, c := range s.Match {
		d.Match = append(d.Match, canonicalConjunction(c))
	}
	slices.Sort(d.Match)
	return d
}

// canonicalConjunction serialises a conjunction with its tests sorted and each set sorted and
// de-duplicated: an AND of tests, and a set, mean the same in any order.
func canonicalConjunction(c flowv1.Conjunction) string {
	tests := make([]string, 0, len(c.And))
	for _, t := range c.And {
		tests = append(tests, canonicalTest(t))
	}
	slices.Sort(tests)
	return "[" + strings.Join(tests, ",") + "]"
}

func canonicalTest(t flowv1.AtomicTest) string {
	t = *t.DeepCopy()
	for _, s := range []*flowv1.SetTest{t.InSet, t.NotInSet, t.SuperSet, t.NotSuperSet} {
		if s != nil {
			slices.Sort(s.Set)
			s.Set = slices.Compact(s.Set)
		}
	}
	data, _ := json.Marshal(t)
	return string(data)
}
