package exempt

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/test/harness"
)

// headerPriorityLevelUID is kube-apiserver's response header naming the level that served.
const headerPriorityLevelUID = "X-Kubernetes-PF-PriorityLevel-UID"

// impersonated is the admin config acting as user (in system:authenticated only).
func impersonated(s *harness.Suite, user string) *rest.Config {
	cfg := rest.CopyConfig(s.Cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	return cfg
}

// asUser is a client of the operator's objects acting as user.
func asUser(s *harness.Suite, user string) client.Client {
	c, err := client.New(impersonated(s, user), client.Options{Scheme: harness.Scheme()})
	if err != nil {
		panic(err) // the config is the admin's, which works
	}
	return c
}

func dryRun() client.CreateOption { return client.DryRunAll }

// flowSchema is the FlowSchema name that sends user's requests to RequestPriority rp, with
// the record of exempt rights when recorded.
func flowSchema(name, rp, user string, recorded bool) *flowv1.FlowSchema {
	fs := &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: 1000, RequestPriority: flowv1.RequestPriorityReference{Name: rp},
		Match: []flowv1.Conjunction{apitest.And(apitest.Equals(flowv1.FieldUser, user))}}}
	if recorded {
		fs.Annotations = map[string]string{flowv1.AnnotationExemptAuthorized: "true"}
	}
	return fs
}

// levelZero is a RequestPriority named name at the exempt level 0.
func levelZero(name string) *flowv1.RequestPriority {
	return &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// servedBy returns the UID of the priority level that served a list of ConfigMaps by user.
func servedBy(ctx context.Context, s *harness.Suite, user string) (string, error) {
	cfg := impersonated(s, user)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/api/v1/namespaces/default/configmaps?limit=1", nil)
	if err != nil {
		return "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	uid := resp.Header.Get(headerPriorityLevelUID)
	if resp.StatusCode >= http.StatusInternalServerError || uid == "" { // classified before authorization
		return "", fmt.Errorf("list as %s: status %d, %s %q", user, resp.StatusCode, headerPriorityLevelUID, uid)
	}
	return uid, nil
}

// exemptUID is the UID of kube-apiserver's mandatory exempt PriorityLevelConfiguration.
func exemptUID(t *testing.T, s *harness.Suite) string {
	t.Helper()
	var plc flowcontrolv1.PriorityLevelConfiguration
	if err := s.Client.Get(context.Background(), client.ObjectKey{Name: flowcontrolv1.PriorityLevelConfigurationNameExempt}, &plc); err != nil {
		t.Fatal(err)
	}
	return string(plc.UID)
}

// wantServed checks, a few times over a few seconds after the projection settled, that user's
// requests are (exempt) or are not served by the exempt level.
func wantServed(t *testing.T, s *harness.Suite, user string, exempt bool) {
	t.Helper()
	want := exemptUID(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 5 {
		uid, err := servedBy(ctx, s, user)
		if err != nil {
			t.Fatal(err)
		}
		if (uid == want) != exempt {
			t.Fatalf("%s's request served by level UID %s; exempt is %s; want exempt=%v", user, uid, want, exempt)
		}
		time.Sleep(time.Second) // a stray projection would show within the next reads
	}
}

// startOperator starts the operator (native enforcement, defaults managed, boss exempt-allowed
// for the webhook too) and stops it when t ends.
func startOperator(t *testing.T, s *harness.Suite) {
	t.Helper()
	args := append(s.Cluster.OperatorArgs("0"), "--exempt-users="+boss)
	op, err := s.Cluster.StartOperator(s.Binary, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("operator log:\n%s", op.ReadLog())
		}
		if err := op.Stop(20 * time.Second); err != nil {
			t.Errorf("stopping the operator: %v", err)
		}
	})
}

// waitProjected waits until the FlowSchema or RequestPriority obj (its name and kind set)
// reports Projected with reason (True for flowv1.ReasonProjected, else False).
func waitProjected(t *testing.T, s *harness.Suite, obj client.Object, reason string) {
	t.Helper()
	harness.Eventually(t, 3*time.Minute, fmt.Sprintf("%T %s Projected reason %s", obj, obj.GetName(), reason),
		func(ctx context.Context) error {
			if err := s.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			c := meta.FindStatusCondition(harness.Conditions(obj), flowv1.ConditionProjected)
			if c == nil || c.Reason != reason || c.ObservedGeneration != obj.GetGeneration() {
				return fmt.Errorf("Projected condition %+v", c)
			}
			return nil
		})
}

// refused checks that err is kube-apiserver's ValidatingAdmissionPolicy refusing a write for
// want of the verb configure-exempt.
func refused(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !containsAll(err.Error(), flowv1.ExemptPolicyName, flowv1.ExemptVerb) {
		t.Errorf("%s: %v, want refused by ValidatingAdmissionPolicy %s (verb %s)", what, err, flowv1.ExemptPolicyName, flowv1.ExemptVerb)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
