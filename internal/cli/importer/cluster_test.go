package importer

import (
	"context"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// TestFromCluster imports the configuration of a real kube-apiserver: its mandatory and
// suggested objects, as it stores them (defaults applied), and one object of the user's.
func TestFromCluster(t *testing.T) {
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "importer", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, t.TempDir(), "kubeconfig", string(kubeconfig))
	s := runtime.NewScheme()
	if err := flowcontrolv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	waitForSuggested(t, ctx, c)
	createMine(t, ctx, c)

	code, out, errOut := run(t, "", "--from-cluster", "--kubeconfig", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantNames(t, out, "mine", "mine")

	config := genericclioptions.NewConfigFlags(false)
	config.KubeConfig = &path
	in, err := loadCluster(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, in, Options{IncludeBootstrap: true})
}

// waitForSuggested waits until kube-apiserver has created its suggested configuration.
func waitForSuggested(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var fss flowcontrolv1.FlowSchemaList
		if err := c.List(ctx, &fss); err == nil && len(fss.Items) >= 11 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("kube-apiserver did not create its suggested FlowSchemas within a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createMine creates a level and a FlowSchema of the user's, leaving fields to the defaults.
func createMine(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	plc := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{
				Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}}}}}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 300,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "mine"},
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser,
					User: &flowcontrolv1.UserSubject{Name: "alice"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""},
					Resources: []string{"pods", "pods/log"}, Namespaces: []string{"tenant-a"}, ClusterScope: true}},
			}}}}
	for _, obj := range []client.Object{plc, fs} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
}
