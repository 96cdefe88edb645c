package gitops_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/test/harness"
)

// healthObjects reach every state a GitOps tool must tell apart. level-a and level-b ask for
// the same level (level-b, younger or later by name, is the duplicate); the native
// PriorityLevelConfiguration apf-taken is not the operator's, so RequestPriority "taken" cannot
// be projected onto it; FlowSchema by-name tests an object's name, which native rules cannot.
var healthObjects = harness.JoinYAML(`apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: apf-taken}
spec: {type: Limited, limited: {nominalConcurrencyShares: 1, limitResponse: {type: Reject}}}
`,
	harness.RequestPriorityYAML("level-a", "{priorityLevel: 100, assuredConcurrencyShares: 10, queuesPerWidth: 1, queueLengthLimit: 10}"),
	harness.RequestPriorityYAML("level-b", "{priorityLevel: 100, assuredConcurrencyShares: 10, queuesPerWidth: 1, queueLengthLimit: 10}"),
	harness.RequestPriorityYAML("taken", "{priorityLevel: 200, assuredConcurrencyShares: 5, queuesPerWidth: 1, queueLengthLimit: 10}"),
	harness.UserFlowSchemaYAML("tenant-a", "level-a", 1000, "alice"),
	harness.UserFlowSchemaYAML("orphan", "missing", 1100, "bob"),
	harness.FlowSchemaYAML("by-name", "level-a", 1200, "{equals: {field: name, value: cluster-info}}"),
	`apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: EventRateLimit
metadata: {name: events}
spec: {limits: [{type: Server, qps: 5, burst: 10}]}
`)

// verdict is what Argo CD (health.lua) and kstatus should say of one object.
type verdict struct {
	kind, name string
	argo       string // Argo CD health status
	argoReason string // a word the Argo CD message must contain (the condition's reason)
	kstatus    status.Status
}

// TestHealthOfRealStatuses creates objects that the operator reports as ready, duplicate,
// unresolved, not projectable and conflicting, then makes generations lag behind with the
// operator stopped, then restarts it with enforcement none and without the events webhook; at
// each step it reads every object from kube-apiserver and checks the verdict of the Argo CD
// health script and of kstatus.
func TestHealthOfRealStatuses(t *testing.T) {
	controlPlane(t)
	script, err := readHealthScript()
	if err != nil {
		t.Fatal(err)
	}
	stop := startOperator(t, controllers.EnforcementNative, eventratelimit.New(clocktesting.NewFakePassiveClock(time.Now()), nil))
	for _, obj := range decodeManifests(t, healthObjects) {
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	expectVerdicts(t, script,
		healthy("RequestPriority", "level-a"),
		degraded("RequestPriority", "level-b", flowv1.ReasonDuplicatePriorityLevel),
		degraded("RequestPriority", "taken", flowv1.ReasonNameConflict),
		healthy("FlowSchema", "tenant-a"),
		degraded("FlowSchema", "orphan", flowv1.ReasonRequestPriorityNotFound),
		degraded("FlowSchema", "by-name", flowv1.ReasonNotExpressible),
		healthy("EventRateLimit", "events"),
	)

	// With the operator stopped, a changed spec and a new object have no status of their
	// generation yet.
	stop()
	changeShares(t, "level-a", 20)
	late := decodeManifests(t, harness.RequestPriorityYAML("late", "{priorityLevel: 300, assuredConcurrencyShares: 5, queuesPerWidth: 1, queueLengthLimit: 10}"))[0]
	if err := k8s.Create(context.Background(), late); err != nil {
		t.Fatal(err)
	}
	expectVerdicts(t, script,
		verdict{"RequestPriority", "level-a", "Progressing", "generation 2", status.InProgressStatus},
		// kstatus cannot tell "no status yet" from "no status ever": without observedGeneration
		// or any condition it assumes Current (see docs/gitops.md).
		verdict{"RequestPriority", "late", "Progressing", "report status", status.CurrentStatus},
	)

	// Restarted with enforcement none and without the events webhook, the operator catches up;
	// what only the projection held against an object no longer counts, while the objects it
	// ignores stay Degraded, and the EventRateLimit is not enforced any more.
	startOperator(t, controllers.EnforcementNone, nil)
	expectVerdicts(t, script,
		healthy("RequestPriority", "level-a"),
		healthy("RequestPriority", "late"),
		healthy("RequestPriority", "taken"),
		healthy("FlowSchema", "by-name"),
		degraded("RequestPriority", "level-b", flowv1.ReasonDuplicatePriorityLevel),
		degraded("FlowSchema", "orphan", flowv1.ReasonRequestPriorityNotFound),
		degraded("EventRateLimit", "events", flowv1.ReasonEnforcementDisabled),
	)
}

// TestHealthWhileProjectionPending checks the verdict on a Projected condition with reason
// Pending. The operator shows Pending only after a native write has failed for a minute, too
// slow for this suite, so the test takes a real, projected FlowSchema from the operator and
// writes the status the operator would then write (Projected False/Pending, and Reconciling)
// through the status subresource with the operator stopped.
func TestHealthWhileProjectionPending(t *testing.T) {
	controlPlane(t)
	script, err := readHealthScript()
	if err != nil {
		t.Fatal(err)
	}
	stop := startOperator(t, controllers.EnforcementNative, nil)
	for _, obj := range decodeManifests(t, harness.JoinYAML(
		harness.RequestPriorityYAML("pending-level", "{priorityLevel: 400, assuredConcurrencyShares: 5, queuesPerWidth: 1, queueLengthLimit: 10}"),
		harness.UserFlowSchemaYAML("pending", "pending-level", 1300, "carol"))) {
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	expectVerdicts(t, script, healthy("FlowSchema", "pending"))
	stop()
	var fs flowv1.FlowSchema
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: "pending"}, &fs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []metav1.Condition{
		{Type: flowv1.ConditionProjected, Status: metav1.ConditionFalse, Reason: flowv1.ReasonPending, Message: "writing FlowSchema apf-pending"},
		{Type: flowv1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: flowv1.ReasonPending, Message: "writing FlowSchema apf-pending"},
	} {
		c.ObservedGeneration = fs.Generation
		meta.SetStatusCondition(&fs.Status.Conditions, c)
	}
	fs.Status.NativeName = ""
	if err := k8s.Status().Update(context.Background(), &fs); err != nil {
		t.Fatal(err)
	}
	expectVerdicts(t, script, verdict{"FlowSchema", "pending", "Progressing", flowv1.ReasonPending, status.InProgressStatus})
}

// healthy is the verdict on an object the operator accepted: Argo CD Healthy, kstatus Current.
func healthy(kind, name string) verdict {
	return verdict{kind, name, "Healthy", flowv1.ReasonAccepted, status.CurrentStatus}
}

// degraded is the verdict on an object the operator refuses for reason: Argo CD Degraded,
// kstatus Failed.
func degraded(kind, name, reason string) verdict {
	return verdict{kind, name, "Degraded", reason, status.FailedStatus}
}

// expectVerdicts waits (up to a minute, for a loaded machine) until every object reads as
// wanted, and fails with every mismatch otherwise.
func expectVerdicts(t *testing.T, script string, want ...verdict) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if last = checkVerdicts(script, want); last == nil {
			return
		}
	}
	t.Fatal(last)
}

func checkVerdicts(script string, want []verdict) error {
	var errs []error
	for _, w := range want {
		obj, err := readObject(w.kind, w.name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h, err := runArgoHealth(script, obj)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: health.lua: %w", w.kind, w.name, err))
			continue
		}
		res, err := status.Compute(obj)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: kstatus: %w", w.kind, w.name, err))
			continue
		}
		if h.Status != w.argo || !strings.Contains(h.Message, w.argoReason) || res.Status != w.kstatus {
			errs = append(errs, fmt.Errorf("%s %s: Argo CD %s, kstatus %s (%s); want Argo CD %s mentioning %q, kstatus %s; status %v",
				w.kind, w.name, h, res.Status, res.Message, w.argo, w.argoReason, w.kstatus, obj.Object["status"]))
		}
	}
	return errors.Join(errs...)
}

// readObject reads an object of the operator's group as Argo CD and Flux do: unstructured,
// straight from kube-apiserver.
func readObject(kind, name string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: flowv1.GroupVersion.Group, Version: flowv1.GroupVersion.Version, Kind: kind})
	err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, obj)
	return obj, err
}

func changeShares(t *testing.T, name string, shares int32) {
	t.Helper()
	var rp flowv1.RequestPriority
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &rp); err != nil {
		t.Fatal(err)
	}
	rp.Spec.AssuredConcurrencyShares = &shares
	if err := k8s.Update(context.Background(), &rp); err != nil {
		t.Fatal(err)
	}
}

// decodeManifests decodes the objects of a multi-document YAML stream.
func decodeManifests(t *testing.T, manifests string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := decodeYAML(strings.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
