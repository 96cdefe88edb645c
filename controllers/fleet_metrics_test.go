package controllers

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
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
	// Two levels of 20 shares: past the default share budget of 27, within that of 90%.
	natives := &native.Existing{MaxSeatLossPercent: ptr.To[int32](90)}
	first := buildSnapshot([]flowv1.RequestPriority{*userRP("a", 10), *userRP("dup", 10)}, nil, natives, nil, time.Now())
	m.record(nil, first)
	second := buildSnapshot([]flowv1.RequestPriority{*userRP("a", 10), *userRP("c", 30)}, nil, natives, first, time.Now())
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
	if got := testutil.CollectAndCount(m.notProjected.GaugeVec); got != maxNotProjectedSeries {
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

// TestFleetMetricsOfTheRunningOperator: the operator set up by SetupWithManager exports the
// digest of what is in the cluster, and follows it: an ignored object changes the counts but
// not the digest, a new object in effect changes the digest.
func TestFleetMetricsOfTheRunningOperator(t *testing.T) {
	resetCluster(t)
	op := startOperator(t, manageDefaults())
	waitAllReady(t, defaultNames, defaultNames)
	first := waitFleetDigest(t, op.registry)

	afterCreationSecond(t, getRP(t, "system-top")) // so that the older system-top keeps level 0
	create(t, userRP("admins", 0))                 // duplicates system-top's level: ignored
	waitRPReason(t, "admins", "False/DuplicatePriorityLevel")
	eventually(t, func() error {
		if v := gaugeValue(t, op.registry, "apf_operator_objects", native.KindRequestPriority, "false", flowv1.ReasonDuplicatePriorityLevel); v != 1 {
			return fmt.Errorf("apf_operator_objects{ready=false,reason=DuplicatePriorityLevel} is %v, want 1", v)
		}
		return nil
	})
	if d := waitFleetDigest(t, op.registry); d != first {
		t.Errorf("an ignored RequestPriority changed the digest from %s to %s", first, d)
	}

	create(t, userRP("batch", 50))
	waitRPReason(t, "batch", "True/Accepted")
	if d := waitFleetDigest(t, op.registry); d == first {
		t.Errorf("a new RequestPriority in effect left the digest at %s", d)
	}
}

// waitFleetDigest waits until the registry exports exactly one digest, the one the objects in
// the cluster give, and returns it.
func waitFleetDigest(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	var digest string
	eventually(t, func() error {
		rps, fss, err := listOurs(context.Background())
		if err != nil {
			return err
		}
		want := effective.Compute(rps.Items, fss.Items).Digest()
		got := labelValues(t, reg, "apf_operator_config_info", "digest")
		if len(got) != 1 || got[0] != want {
			return fmt.Errorf("apf_operator_config_info digests %v, want exactly [%s]", got, want)
		}
		digest = want
		return nil
	})
	return digest
}

// labelValues returns the values of label over the series of a gathered metric.
func labelValues(t *testing.T, reg *prometheus.Registry, metric, label string) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					values = append(values, l.GetValue())
				}
			}
		}
	}
	return values
}

// gaugeValue returns the value of apf_operator_objects-like series with labels kind, ready,
// reason; 0 when absent.
func gaugeValue(t *testing.T, reg *prometheus.Registry, metric, kind, ready, reason string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"kind": kind, "ready": ready, "reason": reason}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if maps.Equal(got, want) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}
