package controllers

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestStatusIsHonest runs without defaults management, so that only the test's objects and the
// backstops make up the effective configuration.
func TestStatusIsHonest(t *testing.T) {
	resetCluster(t)
	op := startOperator(t, operatorConfig{options: Options{ManageDefaults: false, Clock: realClock}})

	// A FlowSchema naming a missing RequestPriority matches nothing and says so.
	create(t, userFS("orphan", "missing"))
	waitFSReason(t, "orphan", "False/RequestPriorityNotFound")

	// Two RequestPriority objects with one level (no webhook runs here): the older wins. The
	// creationTimestamp has a one-second resolution, so the second is made in a later second.
	older := userRP("zz-older", 5000)
	older.Spec.AssuredConcurrencyShares = ptr32(30)
	create(t, older)
	afterCreationSecond(t, older)
	create(t, userRP("aa-newer", 5000))
	create(t, userFS("to-newer", "aa-newer"))
	waitRPReason(t, "aa-newer", "False/DuplicatePriorityLevel")
	waitRPReason(t, "zz-older", "True/Accepted")
	waitFSReason(t, "to-newer", "False/RequestPriorityNotInEffect")
	if rp := getRP(t, "zz-older"); rp.Status.AssuredConcurrencyFraction != "0.2308" { // 30 / (100 + 30)
		t.Errorf("zz-older assured fraction %q, want 0.2308 (the duplicate's shares do not count)", rp.Status.AssuredConcurrencyFraction)
	}
	eventually(t, func() error {
		if n := getRP(t, "aa-newer").Status.FlowSchemas; n != 1 {
			return fmt.Errorf("aa-newer counts %d FlowSchemas, want 1", n)
		}
		return nil
	})
	waitEvent(t, "RequestPriority", "aa-newer", flowv1.ReasonDuplicatePriorityLevel)

	// The missing RequestPriority appears: the orphan comes into effect.
	create(t, userRP("missing", 7000))
	waitFSReason(t, "orphan", "True/Accepted")

	// The older one goes: the newer takes the level, and every fraction follows the new sum.
	remove(t, older)
	waitRPReason(t, "aa-newer", "True/Accepted")
	waitFSReason(t, "to-newer", "True/Accepted")
	waitEvent(t, "RequestPriority", "aa-newer", flowv1.ReasonAccepted)
	eventually(t, func() error {
		if f := getRP(t, "aa-newer").Status.AssuredConcurrencyFraction; f != "0.1429" { // 20 / (100 + 20 + 20)
			return fmt.Errorf("aa-newer assured fraction %q, want 0.1429", f)
		}
		return nil
	})

	// A spec change is reflected with its generation.
	updateFS(t, "orphan", func(fs *flowv1.FlowSchema) { fs.Spec.MatchingPriority = 60 })
	waitFSReason(t, "orphan", "True/Accepted")
	fs := getFS(t, "orphan")
	if c := meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionReady); fs.Generation != 2 || c.ObservedGeneration != 2 {
		t.Errorf("generation %d, observed %d", fs.Generation, c.ObservedGeneration)
	}

	// Without defaults management nothing else appeared, and no defaults metric exists.
	waitAllReady(t, []string{"aa-newer", "missing"}, []string{"orphan", "to-newer"})
	families, _ := op.registry.Gather()
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "apf_operator_defaults_") {
			t.Errorf("defaults metric %s registered although defaults management is off", f.GetName())
		}
	}
}

func ptr32(v int32) *int32 { return &v }
