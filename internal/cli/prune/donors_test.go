package prune

import (
	"bytes"
	"context"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/apf-operator/apf-operator/internal/native"
)

// TestPruneRestoresDonors: uninstall gives a level the operator carved from its recorded
// shares and autoupdate-spec back (a client dry run only lists it), and leaves other levels
// alone.
func TestPruneRestoresDonors(t *testing.T) {
	s := runtime.NewScheme()
	if err := flowcontrolv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	stock := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "workload-low", Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](100)}}}
	other := stock.DeepCopy()
	other.Name = "global-default"
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(native.TakeOver(stock, 30), other).Build()
	var out bytes.Buffer
	if err := Prune(context.Background(), c, DryRunClient, &out); err != nil {
		t.Fatal(err)
	}
	if got := donorShares(t, c); !strings.Contains(out.String(), "would restore PriorityLevelConfiguration workload-low") || got != 70 {
		t.Fatalf("client dry run: %d shares, output:\n%s", got, out.String())
	}
	out.Reset()
	if err := Prune(context.Background(), c, DryRunNone, &out); err != nil {
		t.Fatal(err)
	}
	var got flowcontrolv1.PriorityLevelConfiguration
	if err := c.Get(context.Background(), client.ObjectKey{Name: "workload-low"}, &got); err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Limited.NominalConcurrencyShares != 100 || native.IsDonor(&got) ||
		got.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
		t.Errorf("restored workload-low: %d shares, annotations %v", *got.Spec.Limited.NominalConcurrencyShares, got.Annotations)
	}
	if strings.Count(out.String(), "restored") != 1 {
		t.Errorf("output names other levels than workload-low:\n%s", out.String())
	}
}

func donorShares(t *testing.T, c client.Client) int32 {
	t.Helper()
	var plc flowcontrolv1.PriorityLevelConfiguration
	if err := c.Get(context.Background(), client.ObjectKey{Name: "workload-low"}, &plc); err != nil {
		t.Fatal(err)
	}
	return *plc.Spec.Limited.NominalConcurrencyShares
}
