package native_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
)

// idleResync is the defaults reconciler's resync period in TestIdleNoFight, and twice it the
// informers' resync period.
const idleResync = 400 * time.Millisecond

// idleWindow is how long TestIdleNoFight watches at least: APF_NATIVE_IDLE_WINDOW (`make soak`
// sets 2m, spanning two runs of kube-apiserver's once-a-minute configuration ensurer), else 4s.
// With a 0.4s defaults resync and a 0.8s informer resync, 4s already spans ten defaults passes
// and five informer resyncs. The projector plans on each new snapshot of the configuration,
// which an informer resync (same resourceVersion) does not cause: it does not plan during the
// window.
func idleWindow(t *testing.T) time.Duration {
	if v := os.Getenv("APF_NATIVE_IDLE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("APF_NATIVE_IDLE_WINDOW=%q: %v", v, err)
		}
		return d
	}
	return 4 * time.Second
}

// TestIdleNoFight proves that the operator and kube-apiserver do not fight over the native
// objects: once the configuration (the defaults and a tenant) has settled, an idle window sees
// no write by the operator and no change to any native FlowSchema or
// PriorityLevelConfiguration, the operator's or kube-apiserver's. kube-apiserver's mandatory
// exempt objects survive, and still take system:masters first.
func TestIdleNoFight(t *testing.T) {
	resetCluster(t)
	createDefaults(t, true)
	create(t, rp("tenant", 5000, 10, 16, 4, 50))
	create(t, fs("tenant-a", 1000, "tenant", apitest.And(apitest.Equals(flowv1.FieldUser, "tenant-a"))))
	informerResync := 2 * idleResync
	op := startOperator(t, operatorConfig{manageDefaults: true, resync: idleResync, syncPeriod: &informerResync})
	waitProjectedFS(t, "tenant-a")
	waitSettled(t)
	if err := defaultsPresent(); err != nil {
		t.Fatal(err)
	}
	if got := waitProjectedFS(t, "system-top"); got != native.NativeName("system-top") {
		t.Errorf("FlowSchema system-top projected onto %s", got)
	}
	if got := waitProjectedRP(t, "system-top"); got != native.ExemptLevelName {
		t.Errorf("RequestPriority system-top projected onto %s, want kube-apiserver's %s", got, native.ExemptLevelName)
	}
	checkExempt(t)

	window := idleWindow(t)
	writes, natives, ours := op.writes.Load(), nativeVersions(t), ourVersions(t)
	passes := reconcilePasses(t)
	wantPasses := int(window/idleResync) / 2
	start := time.Now()
	watchIdle(t, window, passes["apf-defaults"]+wantPasses)
	if n := op.writes.Load() - writes; n != 0 {
		t.Errorf("the operator made %d writes during an idle %s: %v", n, window, op.writesSince(writes))
	}
	if d := diffVersions(natives, nativeVersions(t)); d != "" {
		t.Errorf("native objects changed during the idle %s: %s", window, d)
	}
	if d := diffVersions(ours, ourVersions(t)); d != "" {
		t.Errorf("our objects changed during the idle %s: %s", window, d)
	}
	if n := eventsSince(t, start); n != 0 {
		t.Errorf("%d events emitted during the idle %s", n, window)
	}
	after := reconcilePasses(t)
	if ran, want := after["apf-defaults"]-passes["apf-defaults"], wantPasses; ran < want {
		t.Errorf("the defaults reconciler ran only %d times during %s (want at least %d)", ran, window, want)
	}
	t.Logf("idle %s: %d operator writes; %d native objects unchanged; projector passes %d, defaults passes %d",
		window, op.writes.Load()-writes, len(natives), after["apf-projection"]-passes["apf-projection"],
		after["apf-defaults"]-passes["apf-defaults"])
	checkExempt(t)
}

// watchIdle returns once the window has passed and the defaults reconciler's pass count has
// reached passes (its resyncs are the operator's chances to write during the window; a loaded
// machine delays them, so the window stretches until they happened, up to three windows).
func watchIdle(t *testing.T, window time.Duration, passes int) {
	t.Helper()
	time.Sleep(window) // watching the idle period is the test
	for deadline := time.Now().Add(2 * window); reconcilePasses(t)["apf-defaults"] < passes && time.Now().Before(deadline); {
		time.Sleep(idleResync)
	}
}

// checkExempt checks kube-apiserver's mandatory exempt FlowSchema and level, and that a member
// of system:masters is classified by them, ahead of the operator's own projection of
// system-top.
func checkExempt(t *testing.T) {
	t.Helper()
	exemptFS := nativeFS(t, flowcontrolv1.FlowSchemaNameExempt)
	exemptPLC := nativePLC(t, flowcontrolv1.PriorityLevelConfigurationNameExempt)
	if exemptPLC.Spec.Type != flowcontrolv1.PriorityLevelEnablementExempt || exemptFS.Spec.MatchingPrecedence != 1 ||
		exemptFS.Spec.PriorityLevelConfiguration.Name != exemptPLC.Name || native.Owned(exemptFS) || native.Owned(exemptPLC) {
		t.Errorf("kube-apiserver's exempt objects changed: FlowSchema %+v, level %+v", exemptFS.Spec, exemptPLC.Spec)
	}
	masters := identity{user: "cluster-admin-user", groups: []string{"system:masters"}}
	r := get(t, masters, configmapsPath)
	if r.flowSchemaUID != string(exemptFS.UID) || r.priorityLevelUID != string(exemptPLC.UID) {
		idx := listNatives(t)
		name := func(uid string) string {
			if f, ok := idx.fsByUID[uid]; ok {
				return f.Name
			}
			return fmt.Sprintf("unknown %q", uid)
		}
		t.Errorf("a system:masters request was classified by native FlowSchema %s, want %s", name(r.flowSchemaUID), exemptFS.Name)
	}
}

// reconcilePasses reads controller-runtime's count of reconciles per controller (shared by
// every operator of this process; only differences are meaningful).
func reconcilePasses(t *testing.T) map[string]int {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					out[l.GetValue()] += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return out
}
