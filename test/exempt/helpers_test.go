package exempt

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/test/harness"
)

// kube-apiserver's response headers naming the FlowSchema that classified a request and the
// level that served it.
const (
	headerFlowSchemaUID    = "X-Kubernetes-PF-FlowSchema-UID"
	headerPriorityLevelUID = "X-Kubernetes-PF-PriorityLevel-UID"
)

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
	_, level, err := classifiedBy(ctx, s, user)
	return level, err
}

// classifiedBy returns the UIDs of the FlowSchema and the priority level that classified a list
// of ConfigMaps by user.
func classifiedBy(ctx context.Context, s *harness.Suite, user string) (flowSchema, level string, err error) {
	cfg := impersonated(s, user)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/api/v1/namespaces/default/configmaps?limit=1", nil)
	if err != nil {
		return "", "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = resp.Body.Close() }()
	flowSchema, level = resp.Header.Get(headerFlowSchemaUID), resp.Header.Get(headerPriorityLevelUID)
	if resp.StatusCode >= http.StatusInternalServerError || level == "" { // classified before authorization
		return "", "", fmt.Errorf("list as %s: status %d, %s %q", user, resp.StatusCode, headerPriorityLevelUID, level)
	}
	return flowSchema, level, nil
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

// wantServed checks that user's requests are (exempt) or are not served by the exempt level,
// once kube-apiserver has digested every projection the operator planned so far (a stray
// projection onto exempt included; see projectionDigested).
func wantServed(t *testing.T, s *harness.Suite, user string, exempt bool) {
	t.Helper()
	projectionDigested(t, s)
	want := exemptUID(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	uid, err := servedBy(ctx, s, user)
	if err != nil {
		t.Fatal(err)
	}
	if (uid == want) != exempt {
		t.Fatalf("%s's request served by level UID %s; exempt is %s; want exempt=%v", user, uid, want, exempt)
	}
}

// barriers counts projectionDigested's barriers, which each have a name and a user of their own.
var barriers atomic.Int32

// projectionDigested is the barrier of the negative checks: it creates a FlowSchema for a
// user of its own on the default RequestPriority workload-low and waits until kube-apiserver
// classifies that user's request by its native FlowSchema (by UID), then deletes it. The
// projector applies its plans one at a time (one worker) and each plan whole, and every plan
// holds the whole configuration: a projection that the configuration before the barrier
// causes (a stray one onto exempt too) is written before the barrier's, and kube-apiserver
// classifies by the set of native objects it has read, in order. A request read after the
// barrier is therefore classified by it.
func projectionDigested(t *testing.T, s *harness.Suite) {
	t.Helper()
	ctx := context.Background()
	barrierUser := fmt.Sprintf("barrier-%d", barriers.Add(1))
	barrier := flowSchema(barrierUser, effective.BackstopLowName, barrierUser, false)
	create(t, s.Client, barrier)
	defer func() {
		if err := s.Client.Delete(ctx, barrier); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the barrier FlowSchema: %v", err)
		}
	}()
	waitProjected(t, s, barrier, flowv1.ReasonProjected)
	var native flowcontrolv1.FlowSchema
	harness.Eventually(t, 3*time.Minute, "kube-apiserver classifying by the barrier's native FlowSchema",
		func(ctx context.Context) error {
			var fs flowv1.FlowSchema
			if err := s.Client.Get(ctx, client.ObjectKeyFromObject(barrier), &fs); err != nil {
				return err
			}
			if err := s.Client.Get(ctx, client.ObjectKey{Name: fs.Status.NativeName}, &native); err != nil {
				return err
			}
			got, _, err := classifiedBy(ctx, s, barrierUser)
			if err != nil {
				return err
			}
			if got != string(native.UID) {
				return fmt.Errorf("%s classified by FlowSchema UID %s, want %s (%s)", barrierUser, got, native.UID, native.Name)
			}
			return nil
		})
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
