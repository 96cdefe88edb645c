package native_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/harness"
)

// The seats kube-apiserver gives its levels (apiserver_flowcontrol_nominal_limit_seats), as
// the tests read them and compare them with the operator's status.

// nominalSeats reads apiserver_flowcontrol_nominal_limit_seats by level.
func nominalSeats() (map[string]float64, error) {
	resp, err := admin.Get(baseURL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	families, err := harness.ParseMetrics(resp.Body)
	if err != nil {
		return nil, err
	}
	seats := map[string]float64{}
	for _, m := range families["apiserver_flowcontrol_nominal_limit_seats"].GetMetric() {
		seats[harness.MetricLabel(m, "priority_level")] = m.GetGauge().GetValue()
	}
	return seats, nil
}

// nominalSum is the sum of the nominal seats of the native levels that exist; levels lists
// each one's shares and seats, for messages. kube-apiserver keeps publishing the gauges of a
// deleted level (e.g. the backstop projected by an earlier test's operator) with their last
// values, so the sum of every series would count levels that are gone. A deleted level still
// quiescing would lower the kept levels' seats instead, which the callers check.
func nominalSum() (sum float64, levels string, err error) {
	seats, err := nominalSeats()
	if err != nil {
		return 0, "", err
	}
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := k8s.List(context.Background(), &plcs); err != nil {
		return 0, "", err
	}
	var each []string
	for _, plc := range plcs.Items {
		shares := "exempt"
		if l := plc.Spec.Limited; l != nil && l.NominalConcurrencyShares != nil {
			shares = fmt.Sprint(*l.NominalConcurrencyShares)
		}
		sum += seats[plc.Name]
		each = append(each, fmt.Sprintf("%s: %s shares, %v seats", plc.Name, shares, seats[plc.Name]))
	}
	return sum, strings.Join(each, "; "), nil
}

// seatsSettled checks that every projected RequestPriority's status.nativeNominalSeats is its
// native level's apiserver_flowcontrol_nominal_limit_seats.
func seatsSettled(rps []flowv1.RequestPriority) error {
	seats, err := nominalSeats()
	if err != nil {
		return err
	}
	for _, rp := range rps {
		if rp.Status.NativeName == "" {
			continue
		}
		want, ok := seats[rp.Status.NativeName]
		if got := rp.Status.NativeNominalSeats; ok && (got == nil || float64(*got) != want) {
			return fmt.Errorf("RequestPriority %s: status.nativeNominalSeats %v, kube-apiserver's %s has %v", rp.Name,
				got, rp.Status.NativeName, want)
		}
	}
	return nil
}

// statusSeatsAre checks that RequestPriority name's status.nativeNominalSeats is
// kube-apiserver's apiserver_flowcontrol_nominal_limit_seats of level.
func statusSeatsAre(t *testing.T, name, level string) error {
	seats, found := scrapeMetric(t, "apiserver_flowcontrol_nominal_limit_seats", "priority_level", level)
	if !found {
		return fmt.Errorf("no nominal seats metric for %s yet", level)
	}
	var obj flowv1.RequestPriority
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &obj); err != nil {
		return err
	}
	if got := obj.Status.NativeNominalSeats; got == nil || float64(*got) != seats {
		return fmt.Errorf("%s status.nativeNominalSeats %v, kube-apiserver's metric for %s %v", name, got, level, seats)
	}
	return nil
}
