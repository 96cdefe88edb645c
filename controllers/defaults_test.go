package controllers

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// manageDefaults runs the defaults reconciler with enforcement none, whose defaults are the
// proposal's five and five (defaults_native_test.go covers enforcement native's).
func manageDefaults() operatorConfig {
	return operatorConfig{options: Options{Enforcement: EnforcementNone, ManageDefaults: true, Clock: realClock}}
}

// counter returns the value of a defaults metric for a kind (0 when never counted).
func counter(t testing.TB, reg *prometheus.Registry, name, kind string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func wantCounter(t testing.TB, reg *prometheus.Registry, name, kind string, want float64) {
	t.Helper()
	if got := counter(t, reg, name, kind); got != want {
		t.Errorf("%s{kind=%q} = %v, want %v", name, kind, got, want)
	}
}

func TestEmptyClusterGetsReadyDefaults(t *testing.T) {
	resetCluster(t)
	stamp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	op := startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNone, ManageDefaults: true,
		Clock: testingclock.NewFakePassiveClock(stamp)}})
	waitAllReady(t, defaultNames, defaultNames)

	for _, name := range defaultNames {
		rp := getRP(t, name)
		if !isDefaultRP(rp) {
			t.Errorf("RequestPriority %s is not the default: %+v %+v", name, rp.ObjectMeta, rp.Spec)
		}
		wantFraction := "0.0714" // 10 / (100 + 4*10)
		if name == "system-top" {
			wantFraction = ""
		}
		if rp.Status.FlowSchemas != 1 || rp.Status.AssuredConcurrencyFraction != wantFraction {
			t.Errorf("RequestPriority %s status: flowSchemas %d, fraction %q; want 1, %q",
				name, rp.Status.FlowSchemas, rp.Status.AssuredConcurrencyFraction, wantFraction)
		}
		if c := meta.FindStatusCondition(rp.Status.Conditions, flowv1.ConditionReady); !c.LastTransitionTime.Time.Equal(stamp) {
			t.Errorf("RequestPriority %s: transition time %v, want the injected clock's %v", name, c.LastTransitionTime, stamp)
		}
		fs := getFS(t, name)
		if !defaults.Owned(fs) || !equality.Semantic.DeepEqual(fs.Spec, defaultFS(name).Spec) {
			t.Errorf("FlowSchema %s is not the default: %+v %+v", name, fs.ObjectMeta, fs.Spec)
		}
		waitEvent(t, "RequestPriority", name, "Created")
		waitEvent(t, "FlowSchema", name, "Created")
	}
	expected := `
# HELP apf_operator_defaults_created_total Default RequestPriority and FlowSchema objects the operator created, by kind.
# TYPE apf_operator_defaults_created_total counter
apf_operator_defaults_created_total{kind="FlowSchema"} 5
apf_operator_defaults_created_total{kind="RequestPriority"} 5
`
	if err := testutil.GatherAndCompare(op.registry, strings.NewReader(expected), "apf_operator_defaults_created_total",
		"apf_operator_defaults_repaired_total", "apf_operator_defaults_conflicts_total"); err != nil {
		t.Error(err)
	}
}

func TestUserLevelZeroIsRespected(t *testing.T) {
	resetCluster(t)
	op := startOperator(t, manageDefaults())
	waitAllReady(t, defaultNames, defaultNames)

	// A user's level-0 admins duplicates system-top's level: the older system-top keeps it.
	afterCreationSecond(t, getRP(t, "system-top"))
	create(t, userRP("admins", 0))
	waitRPReason(t, "admins", "False/DuplicatePriorityLevel")
	waitRPReason(t, "system-top", "True/Accepted")

	// system-top deleted while admins has level 0: not recreated (the proposal's rule).
	remove(t, getRP(t, "system-top"))
	waitRPReason(t, "admins", "True/Accepted")
	barrier(t, "system-high", "system-high")
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: "system-top"}, &flowv1.RequestPriority{}); !apierrors.IsNotFound(err) {
		t.Fatalf("system-top was recreated although admins has level 0 (err %v)", err)
	}
	// Its FlowSchema now names nothing: neither an object nor a backstop (level 0 exists).
	waitFSReason(t, "system-top", "False/RequestPriorityNotFound")

	// The user replaces system-low and deletes workload-high; then every level-0 object goes.
	remove(t, getRP(t, "system-low"))
	mine := userRP("system-low", 2500)
	create(t, mine)
	remove(t, getRP(t, "workload-high"))
	remove(t, userRP("admins", 0))

	// The defaults come back, except the name the user holds.
	waitAllReady(t, defaultNames, defaultNames)
	for _, name := range []string{"system-top", "workload-high"} {
		if !isDefaultRP(getRP(t, name)) {
			t.Errorf("RequestPriority %s was not recreated as the default", name)
		}
	}
	got := getRP(t, "system-low")
	if got.UID != mine.UID || defaults.Owned(got) || !equality.Semantic.DeepEqual(got.Spec, mine.Spec) {
		t.Errorf("the user's system-low was changed: %+v %+v", got.ObjectMeta, got.Spec)
	}
	wantCounter(t, op.registry, "apf_operator_defaults_created_total", kindRequestPriority, 7)
	wantCounter(t, op.registry, "apf_operator_defaults_created_total", kindFlowSchema, 5)
}

func TestUserObjectsAreLeftAlone(t *testing.T) {
	resetCluster(t)
	mine := userRP("system-high", 1500) // a user's system-high with another spec, made first
	create(t, mine)
	op := startOperator(t, manageDefaults())
	waitAllReady(t, defaultNames, defaultNames)
	if got := getRP(t, "system-high"); got.UID != mine.UID || defaults.Owned(got) || !equality.Semantic.DeepEqual(got.Spec, mine.Spec) {
		t.Errorf("the user's system-high was changed: %+v %+v", got.ObjectMeta, got.Spec)
	}

	// A default with autoupdate "true" edited by hand is repaired.
	updateRP(t, "workload-high", func(rp *flowv1.RequestPriority) { rp.Spec.AssuredConcurrencyShares = ptr.To[int32](50) })
	updateFS(t, "workload-low", func(fs *flowv1.FlowSchema) { fs.Spec.FlowDistinguisher = nil })
	eventually(t, func() error {
		if !isDefaultRP(getRP(t, "workload-high")) || !equality.Semantic.DeepEqual(getFS(t, "workload-low").Spec, defaultFS("workload-low").Spec) {
			return fmt.Errorf("hand edits not repaired yet")
		}
		return nil
	})
	waitEvent(t, "RequestPriority", "workload-high", "Repaired")
	waitEvent(t, "FlowSchema", "workload-low", "Repaired")

	// With autoupdate "false" the user owns it.
	updateRP(t, "system-low", func(rp *flowv1.RequestPriority) {
		rp.Annotations[flowv1.AnnotationAutoUpdate] = "false"
		rp.Spec.AssuredConcurrencyShares = ptr.To[int32](77)
	})
	updateFS(t, "system-low", func(fs *flowv1.FlowSchema) {
		fs.Annotations[flowv1.AnnotationAutoUpdate] = "false"
		fs.Spec.MatchingPriority = 7
	})
	barrier(t, "workload-high", "workload-low")
	if rp := getRP(t, "system-low"); *rp.Spec.AssuredConcurrencyShares != 77 {
		t.Errorf("system-low RequestPriority with autoupdate false was changed: %+v", rp.Spec)
	}
	if fs := getFS(t, "system-low"); fs.Spec.MatchingPriority != 7 {
		t.Errorf("system-low FlowSchema with autoupdate false was changed: %+v", fs.Spec)
	}
	// A marked object whose immutable level differs cannot be repaired: reported, left alone.
	remove(t, getRP(t, "workload-low"))
	copied := userRP("workload-low", 12000)
	copied.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	copied.Annotations = map[string]string{flowv1.AnnotationAutoUpdate: "true"}
	create(t, copied)
	waitEvent(t, "RequestPriority", "workload-low", "RepairBlocked")
	if got := getRP(t, "workload-low"); !equality.Semantic.DeepEqual(got.Spec, copied.Spec) {
		t.Errorf("the unrepairable workload-low was changed: %+v", got.Spec)
	}

	wantCounter(t, op.registry, "apf_operator_defaults_created_total", kindRequestPriority, 4)
	wantCounter(t, op.registry, "apf_operator_defaults_repaired_total", kindRequestPriority, 2) // the edit and the barrier
	wantCounter(t, op.registry, "apf_operator_defaults_repaired_total", kindFlowSchema, 2)
	wantCounter(t, op.registry, "apf_operator_defaults_conflicts_total", kindRequestPriority, 0)
}

// TestCreateConflictIsCountedAndReported makes a user create system-top between the operator's
// read of the cache and its creation.
func TestCreateConflictIsCountedAndReported(t *testing.T) {
	resetCluster(t)
	var raced atomic.Bool
	cfg := manageDefaults()
	cfg.create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, isRP := obj.(*flowv1.RequestPriority); isRP && obj.GetName() == "system-top" && raced.CompareAndSwap(false, true) {
			if err := k8s.Create(ctx, userRP("system-top", 0)); err != nil {
				return err
			}
		}
		return c.Create(ctx, obj, opts...)
	}
	op := startOperator(t, cfg)
	waitAllReady(t, defaultNames, defaultNames)
	if defaults.Owned(getRP(t, "system-top")) {
		t.Error("the operator overwrote the user's system-top")
	}
	waitEvent(t, "RequestPriority", "system-top", "CreateConflict")
	wantCounter(t, op.registry, "apf_operator_defaults_conflicts_total", kindRequestPriority, 1)
	wantCounter(t, op.registry, "apf_operator_defaults_created_total", kindRequestPriority, 4)
	wantCounter(t, op.registry, "apf_operator_defaults_created_total", kindFlowSchema, 5)
}
