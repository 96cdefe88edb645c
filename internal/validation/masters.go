package validation

import (
	"slices"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// MastersOnly reports whether every request match can match is of group system:masters: every
// conjunction holds a superSet test on groups that lists MastersGroup. Such requests go to the
// implicit FlowSchema system-top (internal/apf/effective) before any FlowSchema is tried, so a
// FlowSchema at a non-exempt level with such a match never takes a request. An empty match
// (which matches nothing) is not MastersOnly.
func MastersOnly(match []flowv1.Conjunction) bool {
	if len(match) == 0 {
		return false
	}
	for _, cj := range match {
		if !slices.ContainsFunc(cj.And, requiresMasters) {
			return false
		}
	}
	return true
}

// requiresMasters reports whether the atomic test is true only for members of system:masters.
func requiresMasters(t flowv1.AtomicTest) bool {
	return t.SuperSet != nil && t.SuperSet.Field == flowv1.FieldGroups && slices.Contains(t.SuperSet.Set, MastersGroup)
}
