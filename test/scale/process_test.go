package scale

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apf-operator/apf-operator/test/harness"
)

// The operator as a process of its own (-scale.operator=process, make scale): the built binary,
// run as the chart runs it but for the flags harness.OperatorArgs sets, so that its heap, RSS
// and webhook latency are its own, not shared with the load's clients.

// processUserAgent prefixes the user agent of the operator's binary (client-go's default: the
// binary's name).
const processUserAgent = "apf-operator/"

const (
	operatorNamespace = "apf-system"
	metricsReader     = "scale-metrics-reader"
)

type processOperator struct {
	proc        *harness.Operator
	metricsAddr string
	// pprofAddr serves the operator's /debug/pprof when -scale.cpu-profile asks for a profile.
	pprofAddr string
	token     string
	// families is the last scrape of the operator's /metrics.
	families metricFamilies
}

// startProcessOperator starts the operator binary (harness.OperatorBinary) against the environment (webhooks on
// envtest's port and certificate, enforcement native, no defaults), with the Go runtime's GC
// trace on (its peak heap), and waits until it is ready.
func (e *environment) startProcessOperator(ctx context.Context, dir string) (*processOperator, error) {
	binary, err := harness.OperatorBinary()
	if err != nil {
		return nil, err
	}
	cluster := &harness.Cluster{Env: e.env, Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig")}
	if err := os.WriteFile(cluster.Kubeconfig, e.env.KubeConfig, 0o600); err != nil {
		return nil, err
	}
	op := &processOperator{}
	if op.token, err = harness.MetricsReaderToken(ctx, e.cfg, operatorNamespace, metricsReader, 3*time.Hour); err != nil {
		return nil, err
	}
	probeAddr, err := harness.FreeAddr()
	if err != nil {
		return nil, err
	}
	if op.metricsAddr, err = harness.FreeAddr(); err != nil {
		return nil, err
	}
	args := append([]string{"GODEBUG=gctrace=1", binary}, cluster.OperatorArgs(op.metricsAddr)...)
	args = append(args, "--health-probe-bind-address", probeAddr, "--manage-defaults=false", "--enforcement=native",
		fmt.Sprintf("--native-max-seat-loss-percent=%d", scaleMaxSeatLoss))
	if *cpuProfile != "" {
		if op.pprofAddr, err = harness.FreeAddr(); err != nil {
			return nil, err
		}
		args = append(args, "--pprof-bind-address", op.pprofAddr)
	}
	// env execs the binary: the process id stays the operator's.
	if op.proc, err = cluster.StartOperator("/usr/bin/env", args...); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, "http://"+probeAddr+"/readyz", op.proc); err != nil {
		return nil, errors.Join(err, op.stop())
	}
	return op, nil
}

func waitReady(ctx context.Context, url string, proc *harness.Operator) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if exited, err := proc.Exited(); exited {
			return fmt.Errorf("the operator exited (%v):\n%s", err, proc.ReadLog())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the operator not ready within 2 minutes:\n%s", proc.ReadLog())
}

// scrape reads the operator's /metrics (protobuf: native histograms included).
func (op *processOperator) scrape(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+op.metricsAddr+"/metrics", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+op.token)
	// The metrics server's certificate is self-signed; the token is what is checked here.
	httpClient := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test scraping its own child process
	op.families, err = fetchMetrics(httpClient, req)
	return err
}

func (op *processOperator) snapshots() (uint64, time.Duration, error) {
	if err := op.scrape(context.Background()); err != nil {
		return 0, 0, err
	}
	return op.families.snapshots()
}

func (op *processOperator) latency() (latencyFigures, error) {
	if err := op.scrape(context.Background()); err != nil {
		return latencyFigures{}, err
	}
	return op.families.webhookLatency()
}

// memory returns the operator's peak heap, from its GC trace (the heap is largest when a
// collection starts), and its peak RSS (VmHWM).
func (op *processOperator) memory() (heap, rss uint64, err error) {
	if heap, err = peakHeapFromGCTrace(op.proc.ReadLog()); err != nil {
		return 0, 0, err
	}
	rss, err = peakRSS(fmt.Sprintf("/proc/%d/status", op.proc.PID()))
	return heap, rss, err
}

func (op *processOperator) wrote(userAgent string) bool {
	return strings.HasPrefix(userAgent, processUserAgent)
}

func (op *processOperator) profile(ctx context.Context) *profiler {
	return startProfile(ctx, op.pprofAddr, *cpuProfile, *profileDuration)
}

func (op *processOperator) log() string { return op.proc.ReadLog() }

func (op *processOperator) measured() string { return "operator process" }

func (op *processOperator) stop() error {
	if err := op.proc.Stop(30 * time.Second); err != nil {
		return fmt.Errorf("%w\n%s", err, op.proc.ReadLog())
	}
	return nil
}

// gcLine is a line of GODEBUG=gctrace=1: "gc N @... : ... A->B->C MB, ..." with the heap
// at the collection's start, end and the live heap.
var gcLine = regexp.MustCompile(`(?m)^gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

func peakHeapFromGCTrace(log string) (uint64, error) {
	var peak uint64
	matches := gcLine.FindAllStringSubmatch(log, -1)
	if len(matches) == 0 {
		return 0, errors.New("no GC trace in the operator's log")
	}
	for _, m := range matches {
		for _, v := range m[1:3] {
			mb, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, err
			}
			peak = max(peak, mb<<20)
		}
	}
	return peak, nil
}
