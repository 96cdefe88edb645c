package top_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/cli/top"
	"github.com/apf-operator/apf-operator/test/harness"
)

// The tenant's level: one share, one queue of one request and no borrowing (the recipe of
// test/troubleshooting). The flood starts floodAfter top's start, lasts floodFor, and top's
// window (topInterval) ends settleAfter it, so that the whole flood falls inside top's window.
const (
	// top has no hook that says its first sample is taken, so floodAfter is a generous wait:
	// the first sample (one read of /metrics) takes well under a second on an idle machine.
	// A late sample fails the test with its reason, not a wrong count.
	floodAfter  = 5 * time.Second
	floodFor    = 3 * time.Second
	settleAfter = 3 * time.Second
	topInterval = floodAfter + floodFor + settleAfter
	// nativeSchema is the native FlowSchema projected from our FlowSchema "tiny".
	nativeSchema = "apf-tiny"
)

// applyTiny applies level and FlowSchema "tiny" for bob, and the tenant's namespace.
func applyTiny(ctx context.Context, t *testing.T) {
	t.Helper()
	applyTenant(ctx, t, harness.JoinYAML(
		harness.RequestPriorityYAML("tiny", "{priorityLevel: 7000, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1, borrowingLimitPercent: 0}"),
		harness.UserFlowSchemaYAML("tiny", "tiny", 7000, "bob")),
		"requestpriorities.flowcontrol.apf-operator.io/tiny", "flowschemas.flowcontrol.apf-operator.io/tiny")
}

func TestTopShowsTheFloodingTenantFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	applyTiny(ctx, t)
	bob, url := bobClient(t)

	before := rejectedTotal(ctx, t, nativeSchema)
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		cmd := top.NewCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
		cmd.SetArgs([]string{"--kubeconfig", suite.Cluster.Kubeconfig, "--once", "-o", "json", "--interval", topInterval.String()})
		done <- cmd.ExecuteContext(ctx)
	}()
	time.Sleep(floodAfter)
	floodStart := time.Now()
	got429 := flood(ctx, bob, url, floodFor)
	floodEnd := time.Now()
	if err := <-done; err != nil {
		t.Fatalf("top: %v\n%s", err, errOut.String())
	}
	after := rejectedTotal(ctx, t, nativeSchema)
	if got429 == 0 {
		t.Fatalf("no request of bob was rejected in %s of flooding", floodFor)
	}

	var report top.Report
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("top -o json: %v\n%s", err, out.String())
	}
	if !report.Window.Start.Before(floodStart) || !report.Window.End.After(floodEnd) {
		t.Fatalf("top's window %s..%s does not hold the flood %s..%s (a loaded machine? the comparison needs it)",
			report.Window.Start, report.Window.End, floodStart.UTC(), floodEnd.UTC())
	}
	if len(report.FlowSchemas) == 0 {
		t.Fatalf("top shows no FlowSchema:\n%s", out.String())
	}
	first := report.FlowSchemas[0]
	if first.Name != nativeSchema || first.Source != "FlowSchema/tiny" || first.PriorityLevel != nativeSchema {
		t.Fatalf("first row %s (source %q, level %s), want the flooding tenant %s (FlowSchema/tiny):\n%s",
			first.Name, first.Source, first.PriorityLevel, nativeSchema, out.String())
	}
	want := after - before
	t.Logf("bob saw %d responses 429; kube-apiserver counted %v rejections; top shows %d (%+v) over %.1fs",
		got429, want, first.Rejected.Total, first.Rejected, report.Window.Seconds)
	if want == 0 || math.Abs(float64(first.Rejected.Total)-want) > 0.05*want {
		t.Errorf("top shows %d rejections of the tenant; kube-apiserver's %s counted %v over the window (5%% allowed)",
			first.Rejected.Total, "apiserver_flowcontrol_rejected_requests_total", want)
	}
	if report.Levels[0].Name != nativeSchema || report.Levels[0].Source != "RequestPriority/tiny" || report.Levels[0].NominalSeats < 1 {
		t.Errorf("first level %+v, want the tenant's level apf-tiny from RequestPriority/tiny", report.Levels[0])
	}
	if report.Replicas != 1 || report.ReplicaNote != "" {
		t.Errorf("replicas %d (%q), want envtest's one kube-apiserver", report.Replicas, report.ReplicaNote)
	}
	// The tenant's level and schema saw no rejection before this flood: the status counts all.
	checkStatusSummary(ctx, t, int64(after))
}

// TestKubectlPluginTable runs `kubectl apf top --once` (the binary on PATH as kubectl-apf)
// while bob floods, and checks the table: the tenant's rows, every line within 120 columns.
func TestKubectlPluginTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	applyTiny(ctx, t)
	bob, url := bobClient(t)
	floodCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { flood(floodCtx, bob, url, time.Minute) })
	cmd := exec.CommandContext(ctx, suite.Cluster.Kubectl, "apf", "top", "--once", "--interval", "1s")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+suite.Cluster.Kubeconfig, "PATH="+binDir+":"+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	table, err := cmd.Output()
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("kubectl apf top: %v\n%s", err, stderr.String())
	}
	if strings.Contains(string(table), "WARNING") {
		t.Errorf("the table has a warning")
	}
	t.Logf("kubectl apf top:\n%s", table)
	for i, line := range strings.Split(string(table), "\n") {
		if n := utf8.RuneCountInString(line); n > 120 {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, line)
		}
	}
	// The same replica read directly (--replica-servers) with the kubeconfig's credentials.
	direct := exec.CommandContext(ctx, suite.Cluster.Kubectl, "apf", "top", "--once", "-o", "json", "--interval", "1s",
		"--replica-servers", suite.Cluster.Config.Host)
	direct.Env = cmd.Env
	direct.Stderr = &stderr
	raw, err := direct.Output()
	if err != nil {
		t.Fatalf("kubectl apf top --replica-servers: %v\n%s", err, stderr.String())
	}
	var report top.Report
	if err := json.Unmarshal(raw, &report); err != nil {
		t.Fatal(err)
	}
	if len(report.ReadFrom) != 0 || len(report.Levels) == 0 || report.Replicas != 1 {
		t.Errorf("one replica read directly: readFrom %v, %d levels, %d replicas", report.ReadFrom, len(report.Levels), report.Replicas)
	}
	// bob's flood keeps his one seat busy and his one queue full: his flow shows, with his name.
	for _, want := range []string{"PRIORITY LEVEL", "rp/tiny", "afs/tiny", "global-default", "FLOWS QUEUED", " bob "} {
		if !strings.Contains(string(table), want) {
			t.Errorf("the table lacks %q", want)
		}
	}
}

// rejectedTotal sums apiserver_flowcontrol_rejected_requests_total of a FlowSchema over every
// reason, read from kube-apiserver's /metrics as the admin, with a plain scan of the text (not
// the parser top uses).
func rejectedTotal(ctx context.Context, t *testing.T, schema string) float64 {
	t.Helper()
	client, err := kubernetes.NewForConfig(suite.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_flowcontrol_rejected_requests_total{") ||
			!strings.Contains(line, `flow_schema="`+schema+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// statusSettle bounds how long the operator takes to count a flood in status.observed: it
// reads kube-apiserver's counters every metricsPeriod, a summary at most every second read.
const statusSettle = time.Minute

// checkStatusSummary waits until the tenant's RequestPriority and FlowSchema report the
// rejections kube-apiserver counted for it (want, all of them in the 5-minute window), then
// for two more summaries of the counters by the operator (apf_operator_rejection_summaries_total):
// the first had its chance to write the unchanged count, the second comes a summary interval
// after it. Neither object's status may have been written: the count did not change.
func checkStatusSummary(ctx context.Context, t *testing.T, want int64) {
	t.Helper()
	k8s, err := suite.Cluster.Client()
	if err != nil {
		t.Fatal(err)
	}
	var rp flowv1.RequestPriority
	var fs flowv1.FlowSchema
	harness.Eventually(t, statusSettle, "status.observed.rejectedLast5m "+strconv.FormatInt(want, 10)+" of both tiny objects",
		func(ctx context.Context) error {
			if err := k8s.Get(ctx, client.ObjectKey{Name: "tiny"}, &rp); err != nil {
				return err
			}
			if err := k8s.Get(ctx, client.ObjectKey{Name: "tiny"}, &fs); err != nil {
				return err
			}
			if rejectedIn(rp.Status.Observed) != want || rejectedIn(fs.Status.Observed) != want {
				return fmt.Errorf("RequestPriority tiny %+v, FlowSchema tiny %+v", rp.Status.Observed, fs.Status.Observed)
			}
			return nil
		})
	t.Logf("status.observed of FlowSchema tiny: %+v", *fs.Status.Observed)
	wide, stderr, err := suite.Cluster.KubectlRun(ctx, nil, "get", "afs", "tiny", "-o", "wide")
	if err != nil {
		t.Fatalf("kubectl get afs -o wide: %v\n%s", err, stderr)
	}
	if !strings.Contains(wide, "REJECTED5M") || !strings.Contains(wide, " "+strconv.FormatInt(want, 10)+" ") {
		t.Errorf("kubectl get afs tiny -o wide does not show %d rejections:\n%s", want, wide)
	}
	seen := summaries(ctx, t)
	harness.Eventually(t, statusSettle, "two more summaries of the rejection counters", func(ctx context.Context) error {
		if n := summaries(ctx, t); n < seen+2 {
			return fmt.Errorf("%v summaries, want %v", n, seen+2)
		}
		return nil
	})
	var rpAfter flowv1.RequestPriority
	var fsAfter flowv1.FlowSchema
	if err := k8s.Get(ctx, client.ObjectKey{Name: "tiny"}, &rpAfter); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "tiny"}, &fsAfter); err != nil {
		t.Fatal(err)
	}
	if rpAfter.ResourceVersion != rp.ResourceVersion || fsAfter.ResourceVersion != fs.ResourceVersion {
		t.Errorf("status written although the count did not change: RequestPriority %+v, FlowSchema %+v",
			rpAfter.Status.Observed, fsAfter.Status.Observed)
	}
}

// summariesMetric counts the operator's recomputations of the rejection summary.
const summariesMetric = "apf_operator_rejection_summaries_total"

// summaries reads summariesMetric from the operator's metrics endpoint.
func summaries(ctx context.Context, t *testing.T) float64 {
	t.Helper()
	raw, err := harness.OperatorMetrics(ctx, suite.MetricsAddr, metricsToken)
	if err != nil {
		t.Fatalf("the operator's /metrics: %v", err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if value, ok := strings.CutPrefix(line, summariesMetric+" "); ok {
			n, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("the operator's /metrics has no %s", summariesMetric)
	return 0
}

func rejectedIn(o *flowv1.ObservedTraffic) int64 {
	if o == nil {
		return -1
	}
	return o.RejectedLast5m
}
