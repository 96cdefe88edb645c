package native_test

import (
	"context"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

func boundRP(name string, level int32, nativeLevel string) *flowv1.RequestPriority {
	return &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowv1.RequestPrioritySpec{PriorityLevel: level, NativeLevel: nativeLevel}}
}

// TestBoundLevel: a RequestPriority bound to kube-apiserver's workload-high writes no
// PriorityLevelConfiguration; the FlowSchema referring to it is projected onto workload-high,
// and kube-apiserver classifies a matching request there (X-Kubernetes-PF-* headers); status says
// Bound with the level's real nominal seats. A binding to a level that does not exist is
// Projected=False and writes nothing, for it or its FlowSchema.
func TestBoundLevel(t *testing.T) {
	resetCluster(t)
	createDefaults(t, false)
	create(t, boundRP("bound-high", 4000, "workload-high"))
	create(t, boundRP("bound-missing", 4100, "no-such-level"))
	create(t, fs("bound-user", 1000, "bound-high", apitest.And(apitest.Equals(flowv1.FieldUser, "bound-user"))))
	create(t, fs("missing-user", 1100, "bound-missing", apitest.And(apitest.Equals(flowv1.FieldUser, "missing-user"))))
	startOperator(t, operatorConfig{seatsPeriod: time.Second})

	p := waitRPReason(t, "bound-high", flowv1.ReasonBound)
	if p.status != "True" || p.nativeName != "workload-high" {
		t.Errorf("bound-high: %v, want Projected=True onto workload-high", p)
	}
	if !strings.Contains(p.message, "spec.priorityLevel") || !strings.Contains(p.message, "request width") {
		t.Errorf("bound-high: the message does not name the fields kube-apiserver reads differently: %s", p.message)
	}
	fsName := waitProjectedFS(t, "bound-user")
	nfs := nativeFS(t, fsName)
	level := nativePLC(t, "workload-high")
	if nfs.Spec.PriorityLevelConfiguration.Name != "workload-high" || native.Owned(level) {
		t.Fatalf("native FlowSchema %s refers to %q (want workload-high); workload-high owned by the operator: %v",
			fsName, nfs.Spec.PriorityLevelConfiguration.Name, native.Owned(level))
	}
	expectClassified(t, identity{user: "bound-user"}, configmapsPath, nfs.UID, level.UID)

	missing := waitRPReason(t, "bound-missing", flowv1.ReasonNativeLevelNotFound)
	if missing.status != "False" || missing.nativeName != "" || !strings.Contains(missing.message, "no-such-level") {
		t.Errorf("bound-missing: %v, want Projected=False naming no-such-level and no nativeName", missing)
	}
	fsMissing := waitFSReason(t, "missing-user", flowv1.ReasonRequestPriorityNotProjected)
	if !strings.Contains(fsMissing.message, flowv1.ReasonNativeLevelNotFound) {
		t.Errorf("missing-user does not say why: %s", fsMissing.message)
	}
	waitSettled(t)
	checkNoNativeObjects(t, "bound-high", "bound-missing", "missing-user")
	if r := get(t, identity{user: "missing-user"}, configmapsPath); r.priorityLevelUID == string(level.UID) ||
		r.flowSchemaUID == string(nfs.UID) {
		t.Errorf("missing-user was classified by bound-user's objects: %+v", r)
	}

	harness.Eventually(t, waitTimeout, "bound-high's status.nativeNominalSeats", func() error {
		return statusSeatsAre(t, "bound-high", "workload-high")
	})
}

// checkNoNativeObjects checks that no native object carries the projected name of, or names as
// its source, any of the given objects.
func checkNoNativeObjects(t *testing.T, names ...string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range names {
		for _, obj := range []client.Object{&flowcontrolv1.PriorityLevelConfiguration{}, &flowcontrolv1.FlowSchema{}} {
			err := k8s.Get(ctx, client.ObjectKey{Name: native.NativeName(name)}, obj)
			if !apierrors.IsNotFound(err) {
				t.Errorf("native %T %s: err %v, want NotFound", obj, native.NativeName(name), err)
			}
		}
	}
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := k8s.List(ctx, &plcs); err != nil {
		t.Fatal(err)
	}
	for i := range plcs.Items {
		src := plcs.Items[i].Annotations[flowv1.AnnotationSource]
		for _, name := range names {
			if src == native.KindRequestPriority+"/"+name {
				t.Errorf("native level %s is projected from %s", plcs.Items[i].Name, src)
			}
		}
	}
}
