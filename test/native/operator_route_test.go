package native_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// The operator-route test: the operator's service account, a namespace of data that makes a
// LIST hold its seat for milliseconds, and the flood that saturates the one-seat level.
const (
	routeNamespace       = "operator-route"
	routeConfigMaps      = 30
	routeFloodWorkers    = 16
	routeConvergeBound   = 20 * time.Second
	routeFloodPauseOn429 = 10 * time.Millisecond
)

var routeSA = &native.ServiceAccount{Namespace: "apf-route", Name: "apf-operator"}

// TestOperatorRoute proves the operator's own route on a real kube-apiserver: with a user
// configuration that sends every request to a one-seat level with a one-slot queue, flooded by
// other users until it rejects with 429, the operator (its client impersonating its service
// account) still projects a change and writes its status within routeConvergeBound, and a
// request as its service account is classified by apf.operator on workload-high.
// APF_TEST_NO_OPERATOR_ROUTE=1 runs the same scenario without the route (the mutation).
func TestOperatorRoute(t *testing.T) {
	resetCluster(t)
	prepareRouteData(t)
	create(t, withoutBorrowing(rp("choke", 6500, 1, 1, 0, 1)))
	createDefaults(t, false)
	create(t, fs("everything", 1, "choke", apitest.And()))
	op := operatorConfig{serviceAccount: routeSA, noRoute: os.Getenv("APF_TEST_NO_OPERATOR_ROUTE") != ""}
	startOperator(t, op)
	chokePLC := waitProjectedRP(t, "choke")
	waitProjectedFS(t, "everything")
	waitSettled(t)

	operatorID := identity{user: routeSA.Username(), groups: serviceAccountGroups(routeSA)}
	if !op.noRoute {
		route := nativeFS(t, native.OperatorRouteName)
		checkOwned(t, route, native.KindOperator, routeSA.Namespace+"/"+routeSA.Name)
		expectClassified(t, operatorID, "/api/v1/namespaces/"+routeNamespace+"/configmaps", route.UID,
			nativePLC(t, "workload-high").UID)
	}
	// Everyone else lands on the one-seat level.
	flooder := identity{user: "tenant-flood"}
	expectClassified(t, flooder, "/api/v1/namespaces/"+routeNamespace+"/configmaps",
		nativeFS(t, native.NativeName("everything")).UID, nativePLC(t, chokePLC).UID)

	flood, stop := startRouteFlood(flooder)
	defer stop()
	harness.Eventually(t, waitTimeout, "the check in TestOperatorRoute", func() error {
		if flood.rejectedNow() == 0 {
			return fmt.Errorf("the flood is not rejected yet: %v", flood)
		}
		return nil
	})
	start := time.Now()
	create(t, rp("late", 6600, 1, 1, 0, 5))
	create(t, fs("late", 2, "late", apitest.And(apitest.Equals(flowv1.FieldUser, "nobody"))))
	converged := waitConverged(t, start, routeConvergeBound)
	stop()
	t.Logf("during a flood (%v), the operator (route: %t) projected a new RequestPriority and FlowSchema and "+
		"wrote their status in %s", flood, !op.noRoute, converged.Round(time.Millisecond))
}

// waitConverged waits until both late objects report Projected=True with their native objects
// present, failing after bound; it returns how long it took.
func waitConverged(t *testing.T, start time.Time, bound time.Duration) time.Duration {
	t.Helper()
	deadline := start.Add(bound)
	for {
		rpP, fsP := projectionOfRP(t, "late"), projectionOfFS(t, "late")
		if rpP.status == "True" && fsP.status == "True" && nativeExists(native.NativeName("late")) {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operator did not converge within %s of the change: RequestPriority %v, FlowSchema %v",
				bound, rpP, fsP)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nativeExists reports whether both the native level and FlowSchema name exist.
func nativeExists(name string) bool {
	ctx, key := context.Background(), client.ObjectKey{Name: name}
	return k8s.Get(ctx, key, &flowcontrolv1.FlowSchema{}) == nil &&
		k8s.Get(ctx, key, &flowcontrolv1.PriorityLevelConfiguration{}) == nil
}

// prepareRouteData creates the namespace, the data, RBAC for the flooder, and makes the
// operator's service account cluster-admin (as the chart's ClusterRole lets it do its work).
func prepareRouteData(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: routeNamespace}}); err != nil &&
		!strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	blob := strings.Repeat("x", 64<<10)
	for i := range routeConfigMaps {
		create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("blob-%02d", i), Namespace: routeNamespace},
			Data: map[string]string{"blob": blob}})
	}
	create(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "route-test"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.ServiceAccountKind, Namespace: routeSA.Namespace, Name: routeSA.Name},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "tenant-flood"},
		}})
}

// routeFlood counts the flood's answers.
type routeFlood struct {
	mu               sync.Mutex
	served, rejected int
}

func (f *routeFlood) rejectedNow() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rejected
}

func (f *routeFlood) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("%d LISTs served, %d rejected with 429", f.served, f.rejected)
}

// startRouteFlood floods the one-seat level with LISTs as id until stop is called (stop waits
// for the workers and may be called twice).
func startRouteFlood(id identity) (*routeFlood, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &routeFlood{}
	var wg sync.WaitGroup
	for range routeFloodWorkers {
		wg.Go(func() {
			for ctx.Err() == nil {
				r, err := send(ctx, apiRequest{as: id, method: http.MethodGet,
					path: "/api/v1/namespaces/" + routeNamespace + "/configmaps", readAll: true})
				f.mu.Lock()
				switch {
				case err != nil:
				case r.status == http.StatusOK:
					f.served++
				case r.status == http.StatusTooManyRequests:
					f.rejected++
				}
				f.mu.Unlock()
				if err == nil && r.status == http.StatusTooManyRequests {
					time.Sleep(routeFloodPauseOn429)
				}
			}
		})
	}
	return f, func() {
		cancel()
		wg.Wait()
	}
}
