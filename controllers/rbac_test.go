package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// TestRunsWithGeneratedRole runs the operator as a user bound to nothing but the ClusterRole
// controller-gen generates from the +kubebuilder:rbac markers (config/rbac/role.yaml, or the
// file APF_RBAC_ROLE names): creating, repairing, writing status and recording events must
// all be allowed, so the markers cannot fall short of what the code does.
func TestRunsWithGeneratedRole(t *testing.T) {
	path := os.Getenv("APF_RBAC_ROLE")
	if path == "" {
		path = filepath.Join(envtestutil.RepoRoot(), "config", "rbac", "role.yaml")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the generated ClusterRole: %v (run `make manifests`)", err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	const user = "apf-operator-rbac-test"
	role.ObjectMeta = metav1.ObjectMeta{Name: user}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	create(t, &role)
	create(t, binding)
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), binding)
		_ = k8s.Delete(context.Background(), &role)
	})
	identity, err := testEnv.AddUser(envtest.User{Name: user}, restConfig)
	if err != nil {
		t.Fatal(err)
	}

	// Enforcement none: create and repair the proposal's defaults.
	resetCluster(t)
	stop := startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNone, ManageDefaults: true, Clock: realClock},
		config: identity.Config()}).stop
	waitAllReady(t, defaultNames, defaultNames)
	waitEvent(t, "RequestPriority", "system-top", "Created")
	updateRP(t, "system-high", func(rp *flowv1.RequestPriority) { rp.Spec.HandSize = ptr.To[int32](2) })
	updateFS(t, "system-high", func(fs *flowv1.FlowSchema) { fs.Spec.MatchingPriority = 3 })
	waitEvent(t, "RequestPriority", "system-high", "Repaired")
	waitEvent(t, "FlowSchema", "system-high", "Repaired")
	stop()

	// Enforcement native: replace an unbound default as an earlier operator left it (delete and
	// create), project system-top (native objects).
	remove(t, getRP(t, "system-high"))
	unbound := defaultRP("system-high")
	unbound.Spec.NativeLevel = ""
	create(t, &unbound)
	startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNative, ManageDefaults: true, Clock: realClock},
		config: identity.Config()})
	eventually(t, func() error {
		got := &flowv1.RequestPriority{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: "system-high"}, got); err != nil {
			return err // being replaced
		}
		if got.Spec.NativeLevel != defaultRP("system-high").Spec.NativeLevel {
			return fmt.Errorf("system-high bound to %q, not replaced yet", got.Spec.NativeLevel)
		}
		return nil
	})
	waitAllReady(t, defaultNames, defaultNames)
	fs := &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "system-top"}}
	waitProjected(t, fs, func() []metav1.Condition { return fs.Status.Conditions })

	// The autopilot: its first step writes the pool's status.autopilot (a status patch).
	create(t, pooledRP("grow", 100, 10, 5, 20))
	create(t, pooledRP("give", 200, 10, 5, 20))
	waitNativeShares(t, map[string]int32{"grow": 10, "give": 10})
	operator, err := client.New(identity.Config(), client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	h := newAutopilotHarnessOn(t, operator, func() map[string]float64 { return livePLCShares(t) })
	h.tick(true)
	if st := h.status("grow"); st.State != flowv1.AutopilotWaiting || ptr.Deref(st.AppliedShares, 0) != 10 {
		t.Errorf("status.autopilot written with the generated role: %+v", st)
	}
}
