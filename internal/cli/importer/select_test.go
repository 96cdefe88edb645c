package importer

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apf-operator/apf-operator/internal/nativeview"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// TestSuggestedNames keeps the suggested names in step with kube-apiserver's bootstrap
// configuration: every suggested object it creates is recognised.
func TestSuggestedNames(t *testing.T) {
	mandatory := map[string]bool{}
	for _, fs := range bootstrapset.MandatoryFlowSchemas() {
		mandatory[fs.Name] = true
		if originOf(&fs, suggestedSchemas) != originMandatory {
			t.Errorf("mandatory FlowSchema %q is not recognised", fs.Name)
		}
	}
	for _, l := range bootstrapset.MandatoryPriorityLevels() {
		mandatory[l.Name] = true
	}
	boot := nativeview.BootstrapObjects()
	for _, plc := range boot.PriorityLevels {
		if !mandatory[plc.Name] && originOf(&plc, suggestedLevels) != originSuggested {
			t.Errorf("suggested PriorityLevelConfiguration %q is not recognised", plc.Name)
		}
	}
	for _, fs := range boot.FlowSchemas {
		if !mandatory[fs.Name] && originOf(&fs, suggestedSchemas) != originSuggested {
			t.Errorf("suggested FlowSchema %q is not recognised", fs.Name)
		}
	}
}

func TestOriginOf(t *testing.T) {
	meta := func(name string, labels, annotations map[string]string) *flowcontrolv1.FlowSchema {
		return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
	}
	autoUpdate := map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "false"} // present, whatever its value
	managed := map[string]string{"app.kubernetes.io/managed-by": "apf-operator"}
	for _, c := range []struct {
		obj  *flowcontrolv1.FlowSchema
		want origin
	}{
		{meta("global-default", nil, autoUpdate), originSuggested},
		{meta("global-default", nil, nil), originUser},
		{meta("mine", nil, autoUpdate), originUser},
		{meta("apf-mine", managed, nil), originOperator},
		{meta("catch-all", nil, nil), originMandatory},
	} {
		if got := originOf(c.obj, suggestedSchemas); got != c.want {
			t.Errorf("originOf(%s %v %v) = %d, want %d", c.obj.Name, c.obj.Labels, c.obj.Annotations, got, c.want)
		}
	}
}
