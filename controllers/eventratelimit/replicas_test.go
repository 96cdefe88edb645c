package eventratelimit

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/managerbase"
)

// TestReplicaDividerFollowsReadyReplicas: the divisor is the Deployment's ready replicas (at
// least 1), and an unreadable Deployment keeps the last one.
func TestReplicaDividerFollowsReadyReplicas(t *testing.T) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "apf-operator", Namespace: "apf"},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 3}}
	c := fake.NewClientBuilder().WithScheme(managerbase.Scheme()).WithObjects(dep).WithStatusSubresource(dep).Build()
	engine := eventratelimit.New(clocktesting.NewFakePassiveClock(time.Now()), nil)
	engine.Update([]eventratelimit.Config{{Name: "s", Generation: 1, Spec: flowv1.EventRateLimitSpec{
		Limits: []flowv1.EventRateLimitLimit{{Type: flowv1.EventRateLimitServer, QPS: 30, Burst: 30}}}}})
	d := &replicaDivider{reader: c, deployment: types.NamespacedName{Namespace: "apf", Name: "apf-operator"}, engine: engine}
	ctx := context.Background()
	d.poll(ctx)
	if got := engine.Replicas(); got != 3 {
		t.Fatalf("divisor %d, want the 3 ready replicas", got)
	}
	admitted := 0
	for range 30 {
		if engine.Admit(&eventratelimit.Attributes{}).Allowed {
			admitted++
		}
	}
	if admitted != 10 {
		t.Fatalf("admitted %d, want burst 30 / 3 = 10", admitted)
	}
	dep.Status.ReadyReplicas = 0
	if err := c.Status().Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	d.poll(ctx)
	if got := engine.Replicas(); got != 1 {
		t.Fatalf("divisor %d with no ready replica, want 1", got)
	}
	d.deployment.Name = "missing"
	engine.SetReplicas(2)
	d.poll(ctx)
	if got := engine.Replicas(); got != 2 {
		t.Fatalf("divisor %d after a failed read, want the last one (2)", got)
	}
}
