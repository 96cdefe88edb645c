package defaults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/test/harness"
)

// startReconciler runs the defaults reconciler alone, with enforcement native, in a manager of
// its own until the test ends, and returns its metrics' registry.
func startReconciler(t *testing.T) *prometheus.Registry {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := managerbase.New(ctx, restConfig, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Controller: config.Controller{SkipNameValidation: ptr.To(true)}}) // one per test
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := SetupWithManager(mgr, mgr.GetEventRecorder("apf-defaults-test"), Options{Enforcement: defaults.EnforcementNative,
		Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return reg
}

// present returns the names of the RequestPriorities and FlowSchemas in the cluster.
func present(t *testing.T) (rps, fss map[string]types.UID) {
	t.Helper()
	var rpList flowv1.RequestPriorityList
	var fsList flowv1.FlowSchemaList
	if err := k8s.List(context.Background(), &rpList); err != nil {
		t.Fatal(err)
	}
	if err := k8s.List(context.Background(), &fsList); err != nil {
		t.Fatal(err)
	}
	rps, fss = map[string]types.UID{}, map[string]types.UID{}
	for _, rp := range rpList.Items {
		rps[rp.Name] = rp.UID
	}
	for _, fs := range fsList.Items {
		fss[fs.Name] = fs.UID
	}
	return rps, fss
}

// TestUpgradeFromSystemTopOnly starts the reconciler (enforcement native) on what the earlier
// operator's native defaults left, system-top alone without the upgrade marker. The other four
// RequestPriorities (bound) and four FlowSchemas appear, once each (the created counter), and
// system-top is marked. A RequestPriority the user then deletes, while system-top (level 0)
// exists, is not created again: the seed's rule holds once the upgrade is done.
func TestUpgradeFromSystemTopOnly(t *testing.T) {
	top, topFS := defaultRP("system-top"), defaultFS("system-top")
	delete(top.Annotations, defaults.AnnotationDefaultSet) // as the earlier operator created it
	create(t, &top)
	create(t, &topFS)
	for _, n := range []string{"system-high", "system-low", "workload-high", "workload-low"} {
		cleanup(t, &flowv1.RequestPriority{}, n)
		cleanup(t, &flowv1.FlowSchema{}, n)
	}
	reg := startReconciler(t)
	harness.Eventually(t, time.Minute, "the five and five, system-top marked", func() error {
		rps, fss := present(t)
		if len(rps) != 5 || len(fss) != 5 {
			return fmt.Errorf("%d RequestPriorities, %d FlowSchemas", len(rps), len(fss))
		}
		if v := getRP(t, "system-top").Annotations[defaults.AnnotationDefaultSet]; v != defaults.DefaultSetBound {
			return fmt.Errorf("system-top marker %q", v)
		}
		return nil
	})
	for _, rp := range defaults.RequestPriorities() {
		if got := getRP(t, rp.Name); got.Spec.NativeLevel != rp.Spec.NativeLevel || !defaults.Owned(got) {
			t.Errorf("%s: nativeLevel %q, owned %v; want %q, owned", rp.Name, got.Spec.NativeLevel, defaults.Owned(got), rp.Spec.NativeLevel)
		}
	}
	checkCreated(t, reg, 4, 4)

	// The user deletes workload-low while system-top exists; then drifts workload-high, whose
	// repair (same informer, so a later pass) proves the reconciler decided after the deletion.
	gone := &flowv1.RequestPriority{}
	gone.Name = "workload-low"
	if err := k8s.Delete(context.Background(), gone); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	updateRP(t, "workload-high", func(rp *flowv1.RequestPriority) { rp.Spec.QueueLengthLimit = ptr.To[int32](7) })
	harness.Eventually(t, time.Minute, "workload-high repaired", func() error {
		if got := getRP(t, "workload-high").Spec.QueueLengthLimit; *got != 100 {
			return fmt.Errorf("queueLengthLimit %d", *got)
		}
		return nil
	})
	if rps, _ := present(t); rps["workload-low"] != "" {
		t.Error("workload-low was created again while system-top (level 0) exists")
	}
	checkCreated(t, reg, 4, 4)
}

// checkCreated checks the reconciler's created counter by kind.
func checkCreated(t *testing.T, reg *prometheus.Registry, rps, fss float64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "apf_operator_defaults_created_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" {
					got[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	if got[kindRequestPriority] != rps || got[kindFlowSchema] != fss {
		t.Errorf("created %v, want %v RequestPriorities and %v FlowSchemas", got, rps, fss)
	}
}

// cleanup deletes the named object when the test ends, if it exists.
func cleanup(t *testing.T, obj client.Object, name string) {
	obj.SetName(name)
	t.Cleanup(func() {
		if err := k8s.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", name, err)
		}
	})
}

// TestReplacementSparesUsersDefault starts the reconciler on two unbound owned defaults (as an
// operator before the binding left them) beside a marked system-top. system-high, which the
// user's FlowSchema "mine" refers to, is kept as it is (same uid, still unbound) and reported
// once with a ReplaceBlocked event naming "mine"; workload-low, which only the operator's
// defaults could refer to, is replaced. Once "mine" points elsewhere, system-high is replaced.
func TestReplacementSparesUsersDefault(t *testing.T) {
	top, topFS := defaultRP("system-top"), defaultFS("system-top")
	create(t, &top)
	create(t, &topFS)
	uids := map[string]types.UID{}
	for _, n := range []string{"system-high", "workload-low"} {
		rp := defaultRP(n)
		rp.Spec.NativeLevel = "" // created before the defaults were bound
		create(t, &rp)
		uids[n] = rp.UID
	}
	mine := defaultFS("system-high")
	mine.ObjectMeta = metav1.ObjectMeta{Name: "mine"} // the user's: no label, no annotation
	create(t, &mine)
	reg := startReconciler(t)

	harness.Eventually(t, time.Minute, "workload-low replaced, system-high reported", func() error {
		if err := checkReplaced(t, "workload-low", uids["workload-low"]); err != nil {
			return err
		}
		if notes := eventNotes(t, "system-high", defaults.ReasonReplaceBlocked); len(notes) != 1 || !strings.Contains(notes[0], "FlowSchema mine ") {
			return fmt.Errorf("ReplaceBlocked events on system-high: %q", notes)
		}
		return nil
	})
	// Barrier: a repair of the replaced workload-low is a later pass (one worker), so every
	// replacement decided so far is done and the later pass decided on the same objects.
	updateRP(t, "workload-low", func(rp *flowv1.RequestPriority) { rp.Spec.QueueLengthLimit = ptr.To[int32](7) })
	harness.Eventually(t, time.Minute, "workload-low repaired", func() error {
		if got := getRP(t, "workload-low").Spec.QueueLengthLimit; *got != 100 {
			return fmt.Errorf("queueLengthLimit %d", *got)
		}
		return nil
	})
	if got := getRP(t, "system-high"); got.UID != uids["system-high"] || got.Spec.NativeLevel != "" {
		t.Fatalf("system-high, which the user's FlowSchema refers to, was replaced: uid %s (was %s), nativeLevel %q",
			got.UID, uids["system-high"], got.Spec.NativeLevel)
	}

	updateFS(t, "mine", func(fs *flowv1.FlowSchema) { fs.Spec.RequestPriority.Name = "workload-low" })
	harness.Eventually(t, time.Minute, "system-high replaced once no user FlowSchema refers to it", func() error {
		return checkReplaced(t, "system-high", uids["system-high"])
	})
	if notes := eventNotes(t, "system-high", defaults.ReasonReplaceBlocked); len(notes) != 1 {
		t.Errorf("%d ReplaceBlocked events on system-high, want 1 (reported once)", len(notes))
	}
	checkCreated(t, reg, 2, 0)
}

// checkReplaced returns nil once the named RequestPriority is a new object (not old) bound as
// the default is.
func checkReplaced(t *testing.T, name string, old types.UID) error {
	want := defaultRP(name).Spec.NativeLevel
	got := &flowv1.RequestPriority{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
		return err // being replaced
	}
	if got.UID == old || got.Spec.NativeLevel != want || !defaults.Owned(got) {
		return fmt.Errorf("%s: uid %s (old %s), nativeLevel %q (want %q), owned %v", name, got.UID, old, got.Spec.NativeLevel, want, defaults.Owned(got))
	}
	return nil
}

// eventNotes returns the notes of the events with the reason about the named RequestPriority.
func eventNotes(t *testing.T, name, reason string) []string {
	var list eventsv1.EventList
	if err := k8s.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == kindRequestPriority && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}
