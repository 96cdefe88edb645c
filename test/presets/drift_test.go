package presets_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// drift compares what a manifest sets with the live object the way a GitOps diff does: every
// field the manifest sets must come back with the same value; an explicit null or empty list
// that comes back absent (or the reverse) is drift. Fields only the server sets are ignored.
func drift(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: manifest %v, live %v", path, w, got)}
		}
		var out []string
		for k, v := range w {
			gv, present := g[k]
			if !present {
				out = append(out, fmt.Sprintf("%s.%s: manifest %#v, live absent", path, k, v))
				continue
			}
			out = append(out, drift(path+"."+k, v, gv)...)
		}
		sort.Strings(out)
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: manifest %#v, live %#v", path, w, got)}
		}
		var out []string
		for i := range w {
			out = append(out, drift(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(number(want), number(got)) {
		return []string{fmt.Sprintf("%s: manifest %#v, live %#v", path, want, got)}
	}
	return nil
}

// number makes the numbers of YAML (float64) and of the API (int64) comparable.
func number(v any) any {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int32:
		return float64(n)
	case int:
		return float64(n)
	}
	return v
}

// compared are the parts of an object a GitOps diff compares: the spec and the manifest's
// labels and annotations.
func compared(obj map[string]any) map[string]any {
	out := map[string]any{"spec": obj["spec"]}
	if md, ok := obj["metadata"].(map[string]any); ok {
		out["metadata"] = map[string]any{}
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := md[k]; ok {
				out["metadata"].(map[string]any)[k] = v
			}
		}
	}
	return out
}

func getLive(t *testing.T, ctx context.Context, gvk schema.GroupVersionKind, name string) map[string]any {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := live.k8s.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u.Object
}

// checkPresetDrift: every preset object reads back as the chart rendered it.
func checkPresetDrift(t *testing.T, ctx context.Context, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		got := getLive(t, ctx, o.GroupVersionKind(), o.GetName())
		for _, d := range drift(o.GetKind()+"/"+o.GetName(), compared(o.Object), compared(got)) {
			t.Errorf("preset drift: %s", d)
		}
	}
}

// checkNativeDrift: every native object of the projection reads back as the operator applies
// it (the same conversion to unstructured as the projection controller's apply). Every object
// reporting Projected does not mean the operator's last pass is written (a later pass renumbers
// precedences as the other objects arrive), so the comparison is retried for up to a minute: a
// drift that stays fails, with the last difference.
func checkNativeDrift(t *testing.T, ctx context.Context) {
	t.Helper()
	harness.Eventually(t, time.Minute, "kube-apiserver's objects read back as the projection", func() error {
		return nativeDrift(t, ctx)
	})
}

// nativeDrift compares kube-apiserver's objects with the projection of the cluster's objects
// and returns the first difference.
func nativeDrift(t *testing.T, ctx context.Context) error {
	t.Helper()
	var rps flowv1.RequestPriorityList
	var fss flowv1.FlowSchemaList
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	var nfss flowcontrolv1.FlowSchemaList
	for _, l := range []client.ObjectList{&rps, &fss, &plcs, &nfss} {
		if err := live.k8s.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	plan := native.Project(effective.Compute(rps.Items, fss.Items), native.Existing{PriorityLevels: plcs.Items,
		FlowSchemas: nfss.Items, Operator: &native.ServiceAccount{Namespace: "apf-system", Name: "apf-operator"},
		// As the operator's snapshot: the defaults it withholds, the record of exempt rights.
		Withheld: defaults.Withheld(fss.Items), ExemptAuthorized: native.ExemptRecordOf(fss.Items)})
	var desired []client.Object
	for i := range plan.PriorityLevels {
		desired = append(desired, &plan.PriorityLevels[i])
	}
	for i := range plan.FlowSchemas {
		desired = append(desired, &plan.FlowSchemas[i])
	}
	if len(plan.FlowSchemas) < len(presetKeys) {
		return fmt.Errorf("the projection holds %d native FlowSchemas; want at least the %d presets'", len(plan.FlowSchemas), len(presetKeys))
	}
	if n := clusterScopeOnly(plan.FlowSchemas); n == 0 {
		return errors.New("no projected rule is cluster-scope only (namespaces null): the drift check does not cover that case")
	}
	for _, obj := range desired {
		want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		gvk := flowcontrolv1.SchemeGroupVersion.WithKind("FlowSchema")
		if _, ok := obj.(*flowcontrolv1.PriorityLevelConfiguration); ok {
			gvk = flowcontrolv1.SchemeGroupVersion.WithKind("PriorityLevelConfiguration")
		}
		got := getLive(t, ctx, gvk, obj.GetName())
		if d := drift(gvk.Kind+"/"+obj.GetName(), compared(want), compared(got)); len(d) > 0 {
			return fmt.Errorf("projection drift: %s", strings.Join(d, "; "))
		}
	}
	return nil
}

// clusterScopeOnly counts the native resource rules with clusterScope and no namespaces, the
// rules whose namespaces read back as null (the Kyverno case of issue #27).
func clusterScopeOnly(fss []flowcontrolv1.FlowSchema) int {
	n := 0
	for _, fs := range fss {
		for _, r := range fs.Spec.Rules {
			for _, rr := range r.ResourceRules {
				if rr.ClusterScope && len(rr.Namespaces) == 0 {
					n++
				}
			}
		}
	}
	return n
}
