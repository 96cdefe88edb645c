package e2e

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// TestJourney walks the user's journey in order; each step builds on the state the previous
// ones left.
func TestJourney(t *testing.T) {
	steps := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"defaults appear and are Ready", testDefaultsAppear},
		{"samples apply server-side and become Ready", testSamplesApply},
		{"an invalid manifest is rejected with its field path", testInvalidRejected},
		{"applying the same manifests ten times changes nothing", testGitOpsIdempotent},
		{"the operator leaves fields of other managers alone", testNoFieldFights},
		{"a restarted operator makes no writes", testRestartNoWrites},
		{"the filter keeps light clients' fair share under overload", testFilterFairness},
		{"the kustomize bases render to objects the API server accepts", testKustomizeAccepted},
		{"the chart renders to objects the API server accepts", testChartAccepted},
		{"the chart grants the operator exactly what its RBAC markers generate", testChartRBACMatchesMarkers},
		// Last: it replaces the operator and the webhook configuration's CA.
		{"the operator makes and rotates its own webhook certificate", testCertRotation},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.fn) {
			t.Fatalf("step %q failed; later steps depend on it", s.name)
		}
	}
}

func testDefaultsAppear(t *testing.T) {
	want := map[string]bool{} // the operator runs with enforcement native, as the chart's default
	for _, o := range defaults.Native().RequestPriorities() {
		want["rp/"+o.Name] = true
	}
	for _, o := range defaults.Native().FlowSchemas() {
		want["fs/"+o.Name] = true
	}
	harness.Eventually(t, 60*time.Second, "the default objects to be Ready", func(ctx context.Context) (bool, error) {
		ready, err := readyObjects(ctx)
		if err != nil {
			return false, err
		}
		for name := range want {
			if !ready[name] {
				return false, nil
			}
		}
		return true, nil
	})
}

// readyObjects reports which APF objects are Ready, keyed "rp/<name>" and "fs/<name>".
func readyObjects(ctx context.Context) (map[string]bool, error) {
	return harness.ReadyObjects(ctx, k8s)
}

func samplesDir() string { return filepath.Join(envtestutil.RepoRoot(), "config", "samples") }

func testSamplesApply(t *testing.T) {
	ctx := context.Background()
	if out, errOut, err := cluster.KubectlRun(ctx, nil, "apply", "--server-side", "--field-manager", "argocd", "-k", samplesDir()); err != nil {
		t.Fatalf("kubectl apply: %v\n%s%s", err, out, errOut)
	}
	harness.Eventually(t, 30*time.Second, "the samples to be Ready", func(ctx context.Context) (bool, error) {
		ready, err := readyObjects(ctx)
		return ready["rp/tenant-workloads"] && ready["fs/tenant-workloads"], err
	})
	out, _, err := cluster.KubectlRun(ctx, nil, "get", "apf")
	if err != nil || !strings.Contains(out, "tenant-workloads") {
		t.Fatalf("kubectl get apf does not list the sample (%v):\n%s", err, out)
	}
}

const invalidManifest = `apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata: {name: too-big-a-hand}
spec: {priorityLevel: 7000, assuredConcurrencyShares: 10, queuesPerWidth: 64, handSize: 12, queueLengthLimit: 50}
`

func testInvalidRejected(t *testing.T) {
	_, stderr, err := cluster.KubectlRun(context.Background(), strings.NewReader(invalidManifest), "apply", "--server-side", "-f", "-")
	if err == nil {
		t.Fatal("kubectl accepted a RequestPriority whose hand size is over the 2^60 limit")
	}
	for _, want := range []string{"spec.handSize", "ff(queuesPerWidth=64, handSize=12)", "2^60"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("kubectl's error does not contain %q:\n%s", want, stderr)
		}
	}
}

// resourceVersions returns every APF object's resourceVersion by kind/name.
func resourceVersions(t *testing.T) map[string]string {
	t.Helper()
	rv, err := harness.MapObjects(context.Background(), k8s, func(o harness.Object) string { return o.GetResourceVersion() })
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

func sameVersions(t *testing.T, before, after map[string]string, what string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s changed resourceVersion %s -> %s", what, k, v, after[k])
		}
	}
	if len(after) != len(before) {
		t.Errorf("%s: %d objects before, %d after", what, len(before), len(after))
	}
}

// testGitOpsIdempotent: identical applies write nothing, so the operator, which reacts only to
// writes (and resyncs, which test/native's idle test covers), has nothing to react to. The
// applies are synchronous: the versions read right after them show any write they made, with
// no wait. The barrier then shows that the operator has worked off whatever it had queued.
func testGitOpsIdempotent(t *testing.T) {
	settle(t)
	counts := waitReconciled(t, nil)
	before := resourceVersions(t)
	for i := 0; i < 10; i++ {
		if _, errOut, err := cluster.KubectlRun(context.Background(), nil, "apply", "--server-side", "--field-manager", "argocd", "-k", samplesDir()); err != nil {
			t.Fatalf("apply %d: %v: %s", i, err, errOut)
		}
	}
	sameVersions(t, before, resourceVersions(t), "after ten identical applies")
	waitReconciled(t, counts)
	sameVersions(t, before, resourceVersions(t), "after ten identical applies, once the operator is idle")
}

// settle waits until no APF object has changed for two seconds.
func settle(t *testing.T) {
	t.Helper()
	prev := resourceVersions(t)
	stableSince := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for time.Since(stableSince) < 2*time.Second {
		if time.Now().After(deadline) {
			t.Fatal("APF objects kept changing for 30s")
		}
		time.Sleep(200 * time.Millisecond)
		cur := resourceVersions(t)
		if !maps.Equal(prev, cur) {
			prev, stableSince = cur, time.Now()
		}
	}
}

// testNoFieldFights: a field manager (here "argocd") takes over a default by setting its
// autoupdate annotation to "false" and changing its spec; the operator must neither revert
// the spec nor own any spec field of the objects others applied.
func testNoFieldFights(t *testing.T) {
	ctx := context.Background()
	takeover := `apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: FlowSchema
metadata:
  name: system-top
  annotations: {flowcontrol.apf-operator.io/autoupdate-spec: "false"}
spec:
  matchingPriority: 400
  requestPriority: {name: system-top}
  match:
  - and:
    - superSet: {field: groups, set: ["system:masters"]}
`
	counts := reconcileCounts(t)
	if _, errOut, err := cluster.KubectlRun(ctx, strings.NewReader(takeover), "apply", "--server-side", "--force-conflicts", "--field-manager", "argocd", "-f", "-"); err != nil {
		t.Fatalf("apply: %v: %s", err, errOut)
	}
	// The barrier: the defaults and FlowSchema reconcilers have run on the change (they would
	// revert it if they did not respect the new owner) and the operator is idle again.
	waitReconciled(t, plus(counts, 1, controllerDefaults, controllerFlowSchemas))
	settle(t)
	var top flowv1.FlowSchema
	if err := k8s.Get(ctx, client.ObjectKey{Name: "system-top"}, &top); err != nil {
		t.Fatal(err)
	}
	if p := top.Spec.MatchingPriority; p != 400 {
		t.Fatalf("the operator reverted a spec it no longer owns: matchingPriority = %d", p)
	}
	for _, name := range []string{"tenant-workloads"} {
		var fs flowv1.FlowSchema
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &fs); err != nil {
			t.Fatal(err)
		}
		for _, mf := range fs.ManagedFields {
			if mf.Manager != "argocd" && mf.Subresource != "status" {
				t.Errorf("FlowSchema %s: manager %q owns non-status fields %s", name, mf.Manager, mf.FieldsV1)
			}
		}
	}
}

func testRestartNoWrites(t *testing.T) {
	settle(t)
	if err := operator.Stop(20 * time.Second); err != nil {
		t.Fatalf("stopping the operator: %v", err)
	}
	before := resourceVersions(t)
	var err error
	if operator, err = startOperator(); err != nil {
		t.Fatal(err)
	}
	// The restarted operator syncs its caches and reconciles every object once, and must find
	// nothing to write. The barrier: its metrics count at least one reconcile of every
	// RequestPriority and FlowSchema, a projection and a defaults pass, with nothing left
	// queued or in flight.
	rps, fss := 0.0, 0.0
	for key := range before {
		if strings.HasPrefix(key, "rp/") {
			rps++
		} else {
			fss++
		}
	}
	waitReconciled(t, map[string]float64{controllerRequestPriorities: rps, controllerFlowSchemas: fss,
		controllerProjection: 1, controllerDefaults: 1})
	if exited, exitErr := operator.Exited(); exited {
		t.Fatalf("the restarted operator exited: %v\n%s", exitErr, operator.ReadLog())
	}
	sameVersions(t, before, resourceVersions(t), "after a restart of the operator")
}
