package apfmetrics_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/runtime"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

var update = flag.Bool("update", false, "rewrite testdata/bootstrap-598.metrics from kube-apiserver's APF controller")

// fixture is the seat gauges kube-apiserver's own APF controller publishes for the bootstrap
// configuration with a server limit of 598 (TestSeatsFromKubeAPIServersController writes it
// with -update); other packages' tests read it too.
const fixture = "testdata/bootstrap-598.metrics"

// fixtureLimit is the server concurrency limit of fixture: 598, whose nominal seats are those
// of kube-apiserver's default 600, so that only the upper limits tell them apart.
const fixtureLimit = 598

// TestSeatsFromKubeAPIServersController runs k8s.io/apiserver's APF controller (as
// kube-apiserver runs it, on a fake clientset holding the bootstrap objects) with a server
// limit of 598, and checks that ParseSeats reads back from its metrics that limit and, per level,
// kube-apiserver's ceil(limit × shares / sum of shares).
func TestSeatsFromKubeAPIServersController(t *testing.T) {
	raw := controllerMetrics(t, fixtureLimit)
	if *update {
		if err := os.WriteFile(fixture, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := apfmetrics.ParseSeats(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.ServerLimit != fixtureLimit {
		t.Errorf("server limit %d, want %d", got.ServerLimit, fixtureLimit)
	}
	levels := bootstrapset.PriorityLevels()
	var sum int64
	for i := range levels {
		sum += int64(budget.Shares(&levels[i]))
	}
	for i := range levels {
		l := &levels[i]
		want := budget.Seats(fixtureLimit, int64(budget.Shares(l)), sum)
		if got.Nominal[l.Name] != want || got.Nominal[l.Name] != budget.Seats(600, int64(budget.Shares(l)), sum) {
			t.Errorf("%s: nominal seats %d, want %d (the same as with 600)", l.Name, got.Nominal[l.Name], want)
		}
	}
	saved, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if fromFile, err := apfmetrics.ParseSeats(saved); err != nil || fromFile.ServerLimit != fixtureLimit ||
		len(fromFile.Nominal) != len(levels) {
		t.Errorf("%s: %+v, %v; want the controller's seats (rerun with -update)", fixture, fromFile, err)
	}
}

func TestParseSeatsErrors(t *testing.T) {
	if _, err := apfmetrics.ParseSeats([]byte("apiserver_request_total 1\n")); err == nil {
		t.Error("metrics without nominal seats parsed without error")
	}
	s, err := apfmetrics.ParseSeats([]byte(`apiserver_flowcontrol_nominal_limit_seats{priority_level="exempt"} 0` + "\n"))
	if err != nil || s.ServerLimit != 0 || s.Nominal["exempt"] != 0 || len(s.Nominal) != 1 {
		t.Errorf("no upper limit: %+v, %v; want the nominal seats and an unknown server limit", s, err)
	}
}

// controllerMetrics returns the seat gauges of kube-apiserver's APF controller once it has
// taken the bootstrap configuration with server limit scl.
func controllerMetrics(t *testing.T, scl int) []byte {
	t.Helper()
	klog.SetLogger(logr.Discard())
	fcmetrics.Register()
	var objs []runtime.Object
	for _, l := range bootstrapset.PriorityLevels() {
		objs = append(objs, &l)
	}
	for _, fs := range bootstrapset.FlowSchemas() {
		objs = append(objs, &fs)
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	ctl := utilflowcontrol.New(factory, client.FlowcontrolV1(), scl)
	stop, done := make(chan struct{}), make(chan struct{})
	factory.Start(stop)
	go func() {
		defer close(done)
		_ = ctl.Run(stop)
	}()
	defer func() {
		close(stop)
		<-done
		factory.Shutdown()
	}()
	want := len(bootstrapset.PriorityLevels())
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		raw := gather(t)
		// The current limits come with the controller's first borrowing adjustment, up to 10 s
		// later: only the fixture waits for them.
		if s, err := apfmetrics.ParseSeats(raw); err == nil && len(s.Nominal) == want && s.ServerLimit > 0 &&
			(!*update || len(s.CurrentLimit) == want) {
			return raw
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver's APF controller published no seats for its %d levels within 2 minutes", want)
		}
	}
}

// gather is the text of legacyregistry's seat families, sorted as Prometheus writes them.
func gather(t *testing.T) []byte {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, f := range families {
		if strings.HasSuffix(f.GetName(), "_limit_seats") && strings.HasPrefix(f.GetName(), apfmetrics.Prefix) {
			if _, err := expfmt.MetricFamilyToText(&out, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out.Bytes()
}

// TestSeatsOfARealKubeAPIServer reads a real kube-apiserver 1.36's /metrics (default flags):
// its server limit is 600, and each bootstrap level has ceil(600 × shares / sum of shares).
func TestSeatsOfARealKubeAPIServer(t *testing.T) {
	raw, err := os.ReadFile("testdata/kube-apiserver-1.36.3.metrics")
	if err != nil {
		t.Fatal(err)
	}
	got, err := apfmetrics.ParseSeats(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.ServerLimit != 600 {
		t.Errorf("server limit %d, want 600", got.ServerLimit)
	}
	levels := bootstrapset.PriorityLevels()
	var sum int64
	for i := range levels {
		sum += int64(budget.Shares(&levels[i]))
	}
	for i := range levels {
		if want := budget.Seats(600, int64(budget.Shares(&levels[i])), sum); got.Nominal[levels[i].Name] != want {
			t.Errorf("%s: nominal seats %d, want %d", levels[i].Name, got.Nominal[levels[i].Name], want)
		}
	}
	if got.CurrentLimit["workload-low"] != 56 || len(got.Nominal) != len(levels) {
		t.Errorf("current limit of workload-low %d (want 56), %d levels (want %d)", got.CurrentLimit["workload-low"],
			len(got.Nominal), len(levels))
	}
}
