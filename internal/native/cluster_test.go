package native

import (
	"context"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native/nativetest"
)

// clusterFS is a native FlowSchema of the cluster's own (no operator label) that takes every
// request of user onto level at precedence.
func clusterFS(name, level string, precedence int32, user string) flowcontrolv1.FlowSchema {
	return flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
		MatchingPrecedence:         precedence,
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
				Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"}}},
		}},
	}}
}

// olderOrManaged are a 1.29-to-1.33 cluster's schemas that 1.36 lacks, a managed provider's
// (EKS's names and precedences) and kube-apiserver's tail.
func olderOrManaged() []flowcontrolv1.FlowSchema {
	return []flowcontrolv1.FlowSchema{
		clusterFS("exempt", "exempt", 1, "admin"),
		clusterFS("eks-exempt", "exempt", 2, "eks:exempt-agent"),
		clusterFS("endpoint-controller", "workload-high", 150, "endpoint-controller"),
		clusterFS("workload-leader-election", "leader-election", 200, "leader"),
		clusterFS("eks-workload-high", "workload-high", 1000, "eks:controller"),
		clusterFS("service-accounts", "workload-low", 9000, "sa"),
		clusterFS("global-default", "global-default", 9900, "everyone"),
	}
}

// TestClusterSchemasStayAhead: with a configuration whose one FlowSchema takes every request,
// the cluster's own schemas before the tail (a provider's at 1000, which ties with the first
// precedence of a stock cluster) still classify their requests, and the projection (its route
// included) sits between them and the tail.
func TestClusterSchemasStayAhead(t *testing.T) {
	existing := Existing{PriorityLevels: suggestedLevels(), FlowSchemas: olderOrManaged(), Operator: operatorSA,
		Unmatched: UnmatchedOperator}
	plan := Project(everything(), existing)
	if plan.FirstPrecedence != 1002 {
		t.Errorf("FirstPrecedence = %d, want 1002 (two past eks-workload-high's 1000)", plan.FirstPrecedence)
	}
	if res := plan.FlowSchemaResults["all"]; !res.Projected {
		t.Fatalf("FlowSchema all not projected: %+v", res)
	}
	for _, fs := range plan.FlowSchemas {
		if p := fs.Spec.MatchingPrecedence; p <= 1000 || p >= TailPrecedence {
			t.Errorf("projected %s at %d, want after 1000 and before %d", fs.Name, p, TailPrecedence)
		}
	}
	if route := planFlowSchema(plan, OperatorRouteName); route == nil || route.Spec.MatchingPrecedence != 1001 {
		t.Errorf("operator route %+v, want at 1001", route)
	}
	kube := nativetest.Start(t, append(existing.PriorityLevels, plan.PriorityLevels...),
		append(existing.ClusterSchemas(), plan.FlowSchemas...))
	defer kube.Close()
	for user, want := range map[string]string{
		"eks:exempt-agent": "eks-exempt", "leader": "workload-leader-election", "eks:controller": "eks-workload-high",
		"tenant": NativeName("all"), "sa": NativeName("all"), operatorSA.Username(): OperatorRouteName,
	} {
		a := &request.Attributes{User: user, Verb: "get", Resource: "pods", Namespace: "default", ResourceRequest: true}
		if got := kube.Pick(a); got != want {
			t.Errorf("user %s: kube-apiserver picks %s, want %s", user, got, want)
		}
	}
}

// TestFirstPrecedence: only the cluster's own schemas before the tail move the projection, and
// only when they reach MinPrecedence-1.
func TestFirstPrecedence(t *testing.T) {
	owned := clusterFS("apf-x", "apf-x", 5000, "x")
	owned.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	owned.Annotations = map[string]string{flowv1.AnnotationSource: "FlowSchema/x"}
	labelOnly := clusterFS("apf-ghost", "global-default", 6000, "ghost")
	labelOnly.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	for _, c := range []struct {
		name    string
		schemas []flowcontrolv1.FlowSchema
		want    int32
	}{
		{"none", nil, MinPrecedence},
		{"stock control plane", []flowcontrolv1.FlowSchema{clusterFS("kube-system-service-accounts", "workload-high", 900, "a")}, MinPrecedence},
		{"at 998", []flowcontrolv1.FlowSchema{clusterFS("p", "global-default", 998, "a")}, MinPrecedence},
		{"at 999, the route's", []flowcontrolv1.FlowSchema{clusterFS("p", "global-default", 999, "a")}, MinPrecedence + 1},
		{"an administrator's at 5000", []flowcontrolv1.FlowSchema{clusterFS("mine", "global-default", 5000, "a")}, 5002},
		{"the tail", []flowcontrolv1.FlowSchema{clusterFS("service-accounts", "workload-low", 9000, "a"),
			clusterFS("catch-all", "catch-all", 10000, "a")}, MinPrecedence},
		{"the operator's", []flowcontrolv1.FlowSchema{owned, labelOnly}, MinPrecedence},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := (Existing{FlowSchemas: c.schemas}).FirstPrecedence(); got != c.want {
				t.Errorf("FirstPrecedence = %d, want %d", got, c.want)
			}
		})
	}
}

// TestNoRoomAfterClusterSchemas: a cluster schema at the end of the range leaves no precedence:
// every FlowSchema reports PrecedenceExhausted, and no backstop is projected ahead of it.
func TestNoRoomAfterClusterSchemas(t *testing.T) {
	existing := Existing{PriorityLevels: suggestedLevels(), Unmatched: UnmatchedOperator,
		FlowSchemas: []flowcontrolv1.FlowSchema{clusterFS("late", "global-default", MaxPrecedence, "late")}}
	plan := Project(everything(), existing)
	if res := plan.FlowSchemaResults["all"]; res.Reason != flowv1.ReasonPrecedenceExhausted {
		t.Errorf("FlowSchema all: %+v, want PrecedenceExhausted", res)
	}
	if len(plan.FlowSchemas) != 0 {
		t.Errorf("projected %d FlowSchemas (%s first), want none", len(plan.FlowSchemas), plan.FlowSchemas[0].Name)
	}
}

// TestReadExisting: the live reader returns every native object, and ClusterSchemas /
// ClusterLevels keep those without the operator's label.
func TestReadExisting(t *testing.T) {
	ours := clusterFS("apf-x", "apf-x", 5000, "x")
	ours.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	theirs := clusterFS("eks-workload-high", "workload-high", 1000, "eks:controller")
	level := flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "workload-high"}}
	c := fake.NewClientset(&ours, &theirs, &level)
	got, err := ReadExisting(context.Background(), c.FlowcontrolV1())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.FlowSchemas) != 2 || len(got.PriorityLevels) != 1 {
		t.Fatalf("read %d FlowSchemas and %d levels, want 2 and 1", len(got.FlowSchemas), len(got.PriorityLevels))
	}
	if cs := got.ClusterSchemas(); len(cs) != 1 || cs[0].Name != theirs.Name {
		t.Errorf("ClusterSchemas = %v, want only %s", cs, theirs.Name)
	}
	if cl := got.ClusterLevels(); len(cl) != 1 || cl[0].Name != level.Name {
		t.Errorf("ClusterLevels = %v, want only %s", cl, level.Name)
	}
	if got.FirstPrecedence() != 1002 {
		t.Errorf("FirstPrecedence = %d, want 1002", got.FirstPrecedence())
	}
}
