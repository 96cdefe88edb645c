package skew_test

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/native"
)

// checkVersionSchemas checks that the server holds that version's own configuration, as read
// from it: 1.29 to 1.33 have endpoint-controller (150) and workload-leader-election (200),
// 1.34 and later neither; and the provider's schemas are there, untouched.
func checkVersionSchemas(t *testing.T, cp controlPlane, existing native.Existing) {
	t.Helper()
	byName := map[string]*flowcontrolv1.FlowSchema{}
	for i := range existing.FlowSchemas {
		byName[existing.FlowSchemas[i].Name] = &existing.FlowSchemas[i]
	}
	older := map[string]int32{"endpoint-controller": 150, "workload-leader-election": 200}
	for name, precedence := range older {
		fs := byName[name]
		switch {
		case cp.minor <= 33 && (fs == nil || fs.Spec.MatchingPrecedence != precedence):
			t.Errorf("kube-apiserver %s: FlowSchema %s %v, want it at %d", cp.version, name, fs, precedence)
		case cp.minor >= 34 && fs != nil:
			t.Errorf("kube-apiserver %s: FlowSchema %s exists (at %d); 1.34 removed it", cp.version, name, fs.Spec.MatchingPrecedence)
		}
	}
	for _, want := range providerSchemas() {
		fs := byName[want.Name]
		if fs == nil || !native.ClusterOwned(fs) || fs.Spec.MatchingPrecedence != want.Spec.MatchingPrecedence ||
			fs.Generation != 1 {
			t.Errorf("the provider's FlowSchema %s: %+v, want it untouched at %d", want.Name, fs, want.Spec.MatchingPrecedence)
		}
	}
}

// checkOrder checks, on the precedences read from the server, that every schema of the
// cluster's own before the tail comes before every projected one (the operator's route
// included), and every one of the tail after them.
func checkOrder(t *testing.T, existing native.Existing) {
	t.Helper()
	lastAhead, firstTail := int32(0), int32(10001)
	for _, fs := range existing.ClusterSchemas() {
		if p := fs.Spec.MatchingPrecedence; p < native.TailPrecedence {
			lastAhead = max(lastAhead, p)
		} else {
			firstTail = min(firstTail, p)
		}
	}
	if lastAhead != 7000 {
		t.Errorf("the last of the cluster's own schemas before the tail is at %d, want the administrator's 7000", lastAhead)
	}
	projected := 0
	for i := range existing.FlowSchemas {
		fs := &existing.FlowSchemas[i]
		if !native.Owned(fs) {
			continue
		}
		projected++
		if p := fs.Spec.MatchingPrecedence; p <= lastAhead || p >= firstTail {
			t.Errorf("projected FlowSchema %s at %d, want after the cluster's %d and before its tail at %d",
				fs.Name, p, lastAhead, firstTail)
		}
	}
	if projected < 4 { // system-top, tenant-a, tenant-rest, the operator's route
		t.Errorf("%d projected FlowSchemas on the server, want at least 4", projected)
	}
}
