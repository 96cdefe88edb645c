package skew_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// waitTimeout bounds every wait: the operator and kube-apiserver react in well under a second,
// the margin is for a loaded two-core machine (kube-apiserver's own configuration can take a
// few seconds to appear after start).
const waitTimeout = 90 * time.Second

// startTimeoutVariable is envtest's bound on the control plane's start.
const startTimeoutVariable = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"

// TestSupportedVersions runs the whole check on every control plane, oldest first.
func TestSupportedVersions(t *testing.T) {
	for _, cp := range controlPlanes(t) {
		t.Run("kube-apiserver-"+cp.version, func(t *testing.T) {
			t.Setenv("KUBEBUILDER_ASSETS", cp.dir)
			if os.Getenv(startTimeoutVariable) == "" {
				// envtest's default 20 s is too short for a cold start on a loaded two-core machine.
				t.Setenv(startTimeoutVariable, "2m")
			}
			start := time.Now()
			checkVersion(t, cp)
			t.Logf("kube-apiserver %s: checked in %s", cp.version, time.Since(start).Round(time.Millisecond))
		})
	}
}

// env is one running control plane and operator.
type env struct {
	cluster *harness.Cluster
	k8s     client.Client
	cs      kubernetes.Interface
}

func checkVersion(t *testing.T, cp controlPlane) {
	e := start(t, cp)
	ctx := context.Background()
	for _, fs := range providerSchemas() {
		if err := e.k8s.Create(ctx, fs); err != nil {
			t.Fatalf("creating the provider's FlowSchema %s: %v", fs.Name, err)
		}
	}
	op, err := e.cluster.StartOperator(operatorBinary, e.cluster.OperatorArgs("0")...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("operator log (last 4 KiB):\n%s", tail(op.ReadLog(), 4096))
		}
		if err := op.Stop(15 * time.Second); err != nil {
			t.Errorf("stopping the operator: %v", err)
		}
	})
	for _, obj := range tenantConfiguration() {
		harness.Eventually(t, waitTimeout, "creating "+obj.GetName(), func() error { return e.k8s.Create(ctx, obj) })
	}
	waitAllProjected(t, e.k8s, "rp/tenant", "fs/tenant-a", "fs/tenant-rest", "rp/system-top", "fs/system-top")
	existing, err := native.ReadExisting(ctx, e.cs.FlowcontrolV1())
	if err != nil {
		t.Fatal(err)
	}
	checkVersionSchemas(t, cp, existing)
	checkOrder(t, existing)
	checkClassification(t, e, cp)
}

// start starts the control plane of cp and checks that it is that version.
func start(t *testing.T, cp controlPlane) *env {
	t.Helper()
	c, err := harness.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	e := &env{cluster: c}
	if e.k8s, err = c.Client(); err != nil {
		t.Fatal(err)
	}
	if e.cs, err = kubernetes.NewForConfig(c.Config); err != nil {
		t.Fatal(err)
	}
	v, err := e.cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion != "v"+cp.version {
		t.Fatalf("server version %+v (%v), want v%s", v, err, cp.version)
	}
	// kube-apiserver creates its own configuration in a post-start hook; the operator must see
	// it complete (the operator route's level, the share budget's levels).
	harness.Eventually(t, waitTimeout, "kube-apiserver's own configuration", func() error {
		for _, name := range []string{"catch-all", "global-default", "kube-system-service-accounts"} {
			if _, err := e.cs.FlowcontrolV1().FlowSchemas().Get(context.Background(), name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		_, err := e.cs.FlowcontrolV1().PriorityLevelConfigurations().Get(context.Background(), "workload-high", metav1.GetOptions{})
		return err
	})
	return e
}

// providerSchemas are FlowSchemas as a managed provider and an administrator add them, created
// before the operator: EKS's eks-exempt (2) and eks-workload-high (1000, the first precedence
// of the projection on a stock cluster), and an administrator's at 7000, inside the range the
// projection would use on a stock cluster.
func providerSchemas() []*flowcontrolv1.FlowSchema {
	return []*flowcontrolv1.FlowSchema{
		userSchema("eks-exempt", "exempt", 2, "eks:exempt-agent"),
		userSchema("eks-workload-high", "workload-high", 1000, "eks:controller"),
		userSchema("platform-agents", "workload-high", 7000, "platform:agent"),
	}
}

func userSchema(name, level string, precedence int32, user string) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
		MatchingPrecedence:         precedence,
		DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
				Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"}}},
		}},
	}}
}

// tenantConfiguration is a tenant's level and two FlowSchemas: one for the user tenant-a, one
// that takes every other request, so that nothing reaches kube-apiserver's tail and any schema
// of the cluster's that the projection overtook would lose its requests to it.
func tenantConfiguration() []client.Object {
	rp := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: 5000, AssuredConcurrencyShares: ptr.To[int32](5), QueuesPerWidth: ptr.To[int32](16),
		HandSize: ptr.To[int32](4), QueueLengthLimit: ptr.To[int32](50)}}
	fs := func(name string, priority int32, match flowv1.Conjunction) *flowv1.FlowSchema {
		return &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
			MatchingPriority: priority, RequestPriority: flowv1.RequestPriorityReference{Name: "tenant"},
			Match: []flowv1.Conjunction{match}}}
	}
	return []client.Object{rp,
		fs("tenant-a", 1000, apitest.And(apitest.Equals(flowv1.FieldUser, "tenant-a"))),
		fs("tenant-rest", 2000, apitest.And()),
	}
}

// waitAllProjected waits until every RequestPriority and FlowSchema reports its expected
// projection, the named ones among them: Projected=False with reason ShadowedByNative for exactly
// the defaults native enforcement withholds (defaults.Withheld), Projected=True for every other.
func waitAllProjected(t *testing.T, k8s client.Client, want ...string) {
	t.Helper()
	harness.Eventually(t, waitTimeout, "every object projected as expected", func() error {
		ctx := context.Background()
		objs, err := harness.Objects(ctx, k8s)
		if err != nil {
			return err
		}
		for _, key := range want {
			if _, ok := objs[key]; !ok {
				return fmt.Errorf("%s does not exist", key)
			}
		}
		withheld, err := withheldKeys(ctx, k8s)
		if err != nil {
			return err
		}
		var problems []string
		for key, o := range objs {
			if problem := projectionProblem(o.Conditions, withheld[key]); problem != "" {
				problems = append(problems, key+": "+problem)
			}
		}
		if len(problems) > 0 {
			sort.Strings(problems)
			return errors.New(strings.Join(problems, "; "))
		}
		return nil
	})
}

// withheldKeys returns the keys ("fs/<name>") of the FlowSchemas on the server that native
// enforcement deliberately does not project, as the defaults package itself decides.
func withheldKeys(ctx context.Context, k8s client.Client) (map[string]bool, error) {
	var fss flowv1.FlowSchemaList
	if err := k8s.List(ctx, &fss); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for name := range defaults.Withheld(fss.Items) {
		out["fs/"+name] = true
	}
	return out, nil
}

// projectionProblem describes how condition Projected differs from the expected one, or is "":
// withheld objects must be Projected=False for reason ShadowedByNative, every other Projected=True.
func projectionProblem(conditions []metav1.Condition, withheld bool) string {
	c := meta.FindStatusCondition(conditions, flowv1.ConditionProjected)
	switch {
	case c == nil:
		return "no condition Projected"
	case withheld && (c.Status != metav1.ConditionFalse || c.Reason != flowv1.ReasonShadowedByNative):
		return fmt.Sprintf("want Projected=False reason %s (withheld default), have %+v", flowv1.ReasonShadowedByNative, *c)
	case !withheld && c.Status != metav1.ConditionTrue:
		return fmt.Sprintf("want Projected=True, have %+v", *c)
	}
	return ""
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
