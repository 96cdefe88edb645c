package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

func newTestFleetMetrics(t *testing.T) (*fleetMetrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := newFleetMetrics(reg)
	if err != nil {
		t.Fatalf("registering the fleet metrics: %v", err)
	}
	return m, reg
}

// TestFleetMetricsFromSnapshot: the digest, the objects by Ready reason and the objects in
// effect that are not projected, from one snapshot with every kind of problem.
func TestFleetMetricsFromSnapshot(t *testing.T) {
	rps := []flowv1.RequestPriority{*userRP("a", 10), *userRP("b", 20), *userRP("dup", 10)}
	fss := []flowv1.FlowSchema{*userFS("x", "a"), *userFS("y", "b"), *userFS("z", "missing")}
	// A native level named as a's projection that the operator does not own: a is not projected
	// (NameConflict), nor is x, which names it (RequestPriorityNotProjected).
	natives := &native.Existing{PriorityLevels: []flowcontrolv1.PriorityLevelConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: native.NativeName("a")}}}}
	snap := buildSnapshot(rps, fss, natives, nil, time.Now())
	m, reg := newTestFleetMetrics(t)
	m.record(nil, snap)

	want := fmt.Sprintf(`
# HELP apf_operator_config_info Always 1; digest is a sha256 of the effective configuration's specs (levels and schemas in effect, canonical order), equal on clusters with equal configurations.
# TYPE apf_operator_config_info gauge
apf_operator_config_info{digest=%q} 1
# HELP apf_operator_objects RequestPriority and FlowSchema objects by kind and Ready condition (ready true or false, reason Accepted or why the object is ignored).
# TYPE apf_operator_objects gauge
apf_operator_objects{kind="FlowSchema",ready="false",reason="RequestPriorityNotFound"} 1
apf_operator_objects{kind="FlowSchema",ready="true",reason="Accepted"} 2
apf_operator_objects{kind="RequestPriority",ready="false",reason="DuplicatePriorityLevel"} 1
apf_operator_objects{kind="RequestPriority",ready="true",reason="Accepted"} 2
# HELP apf_operator_projection_failed_object Always 1, for each object in effect that is not projected onto kube-apiserver's native objects, with the reason (at most 100 series, the first by kind and name).
# TYPE apf_operator_projection_failed_object gauge
apf_operator_projection_failed_object{kind="FlowSchema",name="x",reason="RequestPriorityNotProjected"} 1
apf_operator_projection_failed_object{kind="RequestPriority",name="a",reason="NameConflict"} 1
`, snap.cfg.Digest())
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestFleetMetricsFollowTheSnapshot: a new snapshot replaces the digest series (a cluster shows
// exactly one digest) and drops the series of problems that are gone.
func TestFleetMetricsFollowTheSnapshot(t *testing.T) {
	m, reg := newTestFleetMetrics(t)
	first := buildSnapshot([]flowv1.RequestPriority{*userRP("a", 10), *userRP("dup", 10)}, nil, &native.Existing{}, nil, time.Now())
	m.record(nil, first)
	second := buildSnapshot([]flowv1.RequestPriority{*userRP("a", 10), *userRP("c", 30)}, nil, &native.Existing{}, first, time.Now())
	m.record(first, second)
	if first.cfg.Digest() == second.cfg.Digest() {
		t.Fatal("the test needs two configurations with different digests")
	}
	want := fmt.Sprintf(`
# HELP apf_operator_config_info Always 1; digest is a sha256 of the effective configuration's specs (levels and schemas in effect, canonical order), equal on clusters with equal configurations.
# TYPE apf_operator_config_info gauge
apf_operator_config_info{digest=%q} 1
# HELP apf_operator_objects RequestPriority and FlowSchema objects by kind and Ready condition (ready true or false, reason Accepted or why the object is ignored).
# TYPE apf_operator_objects gauge
apf_operator_objects{kind="FlowSchema",ready="true",reason="Accepted"} 0
apf_operator_objects{kind="RequestPriority",ready="true",reason="Accepted"} 2
`, second.cfg.Digest())
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestFleetMetricsBoundPerObjectSeries: 10,000 FlowSchemas that cannot be projected cost
// maxNotProjectedSeries per-object series, the first by name; the counts stay exact.
func TestFleetMetricsBoundPerObjectSeries(t *testing.T) {
	const n = 10000
	rps := []flowv1.RequestPriority{*userRP("a", 10)}
	fss := make([]flowv1.FlowSchema, n)
	for i := range fss {
		fss[i] = *userFS(fmt.Sprintf("fs-%05d", i), "a")
	}
	natives := &native.Existing{PriorityLevels: []flowcontrolv1.PriorityLevelConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: native.NativeName("a")}}}}
	snap := buildSnapshot(rps, fss, natives, nil, time.Now())
	m, _ := newTestFleetMetrics(t)
	m.record(nil, snap)
	// FlowSchema sorts before RequestPriority: a's own series (NameConflict) is past the bound.
	if got := testutil.CollectAndCount(m.notProjected); got != maxNotProjectedSeries {
		t.Errorf("%d per-object series, want %d", got, maxNotProjectedSeries)
	}
	last := fmt.Sprintf("fs-%05d", maxNotProjectedSeries-1)
	if v := testutil.ToFloat64(m.notProjected.WithLabelValues(native.KindFlowSchema, last, flowv1.ReasonRequestPriorityNotProjected)); v != 1 {
		t.Errorf("the series of %s is %v, want 1 (the first %d by kind and name are exported)", last, v, maxNotProjectedSeries)
	}
	if v := testutil.ToFloat64(m.objects.WithLabelValues(native.KindFlowSchema, "true", flowv1.ReasonAccepted)); v != n {
		t.Errorf("%v FlowSchemas Ready, want %d", v, n)
	}
}
