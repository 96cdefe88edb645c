package prune

import (
	"bytes"
	"context"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apf-operator/apf-operator/internal/native"
)

// TestPruneDeletesTheOperatorRoute checks that uninstall removes the operator's own route.
func TestPruneDeletesTheOperatorRoute(t *testing.T) {
	s := runtime.NewScheme()
	if err := flowcontrolv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	source := native.KindOperator + "/apf-system/apf-operator"
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&flowcontrolv1.FlowSchema{ObjectMeta: meta(native.OperatorRouteName, true, source)}).Build()
	var out bytes.Buffer
	if err := Prune(context.Background(), c, DryRunNone, &out); err != nil {
		t.Fatal(err)
	}
	err := c.Get(context.Background(), client.ObjectKey{Name: native.OperatorRouteName}, &flowcontrolv1.FlowSchema{})
	if !apierrors.IsNotFound(err) || !strings.Contains(out.String(), "deleted FlowSchema apf.operator (from "+source+")") {
		t.Errorf("route not pruned (get: %v):\n%s", err, out.String())
	}
}
