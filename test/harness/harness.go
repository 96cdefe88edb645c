// Package harness runs the product the way a user meets it, on one machine and without a
// cluster: a real kube-apiserver and etcd (envtest) with the generated CRDs and the generated
// webhook configuration (registered by URL, served over TLS), the real apf-operator binary as a
// separate process, and kubectl built by hack/. `make demo` and the end-to-end tests use it.
package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// Cluster is a running local control plane.
type Cluster struct {
	// Env is the envtest environment; Config an admin (system:masters) REST config.
	Env    *envtest.Environment
	Config *rest.Config
	// Kubeconfig is the path of an admin kubeconfig file for kubectl and the operator.
	Kubeconfig string
	// Kubectl is the path of the kubectl binary built by hack/build-envtest.sh.
	Kubectl string
	// Dir is a scratch directory removed by Stop.
	Dir string
}

// Start starts kube-apiserver and etcd, installs the CRDs and the webhook configuration from
// config/webhook (pointing at a local port, with a generated serving certificate), and writes
// an admin kubeconfig.
func Start() (*Cluster, error) { return StartControlPlane(ControlPlane{}) }

// StartWith is Start with extra kube-apiserver flags (name without dashes -> value), for
// example a small --max-requests-inflight so that its own flow control is easy to overload.
func StartWith(apiServerFlags map[string]string) (*Cluster, error) {
	return StartControlPlane(ControlPlane{Flags: apiServerFlags})
}

// ControlPlane is what a test's kube-apiserver differs in.
type ControlPlane struct {
	// Flags are extra kube-apiserver flags (name without dashes -> value).
	Flags map[string]string
	// NoWebhooks leaves out the webhook configuration, for tests whose operators run
	// in-process without a webhook server at envtest's port (the CRDs are still installed).
	NoWebhooks bool
}

// StartControlPlane starts kube-apiserver and etcd as cp says (see Start).
func StartControlPlane(cp ControlPlane) (*Cluster, error) {
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "apf-operator-harness-")
	if err != nil {
		return nil, err
	}
	apiServer := env.ControlPlane.GetAPIServer()
	// A certificate directory of our own (not envtest's throw-away one) keeps the serving
	// certificate and the service-account keys across RestartAPIServer.
	apiServer.CertDir = filepath.Join(dir, "kube-apiserver")
	if err := os.Mkdir(apiServer.CertDir, 0o700); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	args := apiServer.Configure()
	for name, value := range cp.Flags {
		args.Set(name, value)
	}
	if !cp.NoWebhooks {
		// Webhooks are called at https://localhost:<port>, a name that both envtest's serving
		// certificate and a certificate rotated in-process for service "localhost" cover.
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: []string{envtestutil.WebhookDir()},
			LocalServingHostExternalName: "localhost"}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting the control plane: %w", err), os.RemoveAll(dir))
	}
	c := &Cluster{Env: env, Config: cfg, Kubectl: filepath.Join(env.BinaryAssetsDirectory, "kubectl"), Dir: dir}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, env.KubeConfig, 0o600); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// Stop stops the control plane and removes the scratch directory.
func (c *Cluster) Stop() error {
	err := c.Env.Stop()
	return errors.Join(err, os.RemoveAll(c.Dir))
}

// KillAPIServer ends kube-apiserver with SIGKILL, as a crash or a node failure would, leaves
// etcd running, and waits until envtest has recorded its exit. (A graceful stop can take
// envtest's whole 20 s stop timeout while clients hold watches.)
func (c *Cluster) KillAPIServer() error {
	apiServer := c.Env.ControlPlane.GetAPIServer()
	pid, err := processWithArg("kube-apiserver", "--cert-dir="+apiServer.CertDir)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing kube-apiserver (pid %d): %w", pid, err)
	}
	return stopKilled(apiServer)
}

// stopKilled does envtest's bookkeeping for a process killed behind its back: once envtest's
// wait on the process has recorded the exit, Stop returns at once; while the process is dying,
// Stop signals it again and waits for that record. In between, after the kernel has reaped the
// process but before envtest's wait goroutine has recorded it (a short window that a loaded
// machine stretches), Stop's signal to the process group fails with ESRCH: Stop is retried
// until the record is there.
func stopKilled(process interface{ Stop() error }) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := process.Stop()
		if !errors.Is(err, syscall.ESRCH) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("envtest has not recorded kube-apiserver's exit 30 s after SIGKILL: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// StartAPIServer starts kube-apiserver again after KillAPIServer, on the same port, etcd,
// certificates and client CA, so that existing clients and kubeconfigs reconnect unchanged.
// Its start timeout is longer than envtest's default 20 s, which a loaded machine can exceed.
func (c *Cluster) StartAPIServer() error {
	apiServer := c.Env.ControlPlane.GetAPIServer()
	apiServer.StartTimeout = 2 * time.Minute
	return apiServer.Start()
}

// processWithArg returns the process id of the program named name (the last element of its
// path) that has arg among its arguments (Linux /proc).
func processWithArg(name, arg string) (int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue // ended meanwhile, or not ours to read
		}
		argv := strings.Split(string(cmdline), "\x00")
		if filepath.Base(argv[0]) == name && slices.Contains(argv, arg) {
			return strconv.Atoi(filepath.Base(dir))
		}
	}
	return 0, fmt.Errorf("no %s process with argument %s", name, arg)
}

// KubectlRun runs kubectl against the cluster with the given stdin (may be nil) and returns
// its standard output and standard error.
func (c *Cluster) KubectlRun(ctx context.Context, stdin io.Reader, args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// Operator is the apf-operator binary running as a separate process.
type Operator struct {
	cmd  *exec.Cmd
	done chan error
	// Log is the path of the file that receives the operator's output.
	Log string
}

// OperatorArgs returns the manager flags that run the operator against this cluster: webhooks
// on the port and certificate envtest prepared (no in-process rotation), no leader election,
// metrics on the given address ("0" disables).
func (c *Cluster) OperatorArgs(metricsAddr string) []string {
	w := c.Env.WebhookInstallOptions
	return []string{"manager",
		"--kubeconfig", c.Kubeconfig,
		"--leader-elect=false",
		"--cert-rotation=false",
		"--webhook-port", strconv.Itoa(w.LocalServingPort),
		"--webhook-cert-dir", w.LocalServingCertDir,
		"--metrics-bind-address", metricsAddr,
		"--health-probe-bind-address", "0",
		"--namespace", "apf-system",
		"--service-account", "apf-operator",
	}
}

// StartOperator starts binary with args, its output going to a log file in the scratch
// directory.
func (c *Cluster) StartOperator(binary string, args ...string) (*Operator, error) {
	log, err := os.CreateTemp(c.Dir, "operator-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	o := &Operator{cmd: cmd, done: make(chan error, 1), Log: log.Name()}
	go func() { o.done <- cmd.Wait(); log.Close() }()
	return o, nil
}

// Stop asks the operator to shut down (SIGTERM), waits up to the grace period, then kills it.
// It returns the process's exit error, if any, other than the signal itself. Stopping an
// operator that has exited returns at once.
func (o *Operator) Stop(grace time.Duration) error {
	if exited, err := o.Exited(); exited {
		return exitError(err) // stopped before, or crashed: nothing to wait for
	}
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-o.done:
		return exitError(err)
	case <-time.After(grace):
		_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
		waitErr := <-o.done
		return fmt.Errorf("operator did not stop within %s; killed (%v)", grace, waitErr)
	}
}

// Kill ends the operator with SIGKILL, as a node failure or the OOM killer would (no graceful
// shutdown: a held leader-election Lease is not released), and waits for it to exit.
func (o *Operator) Kill() error {
	if exited, _ := o.Exited(); exited {
		return errors.New("the operator had already exited")
	}
	if err := syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return err
	}
	o.done <- <-o.done
	return nil
}

// Exited reports whether the process has already ended, and how.
func (o *Operator) Exited() (bool, error) {
	select {
	case err := <-o.done:
		o.done <- err
		return true, err
	default:
		return false, nil
	}
}

// PID is the operator's process id (for reading /proc/<pid>).
func (o *Operator) PID() int { return o.cmd.Process.Pid }

// ReadLog returns the operator's output so far.
func (o *Operator) ReadLog() string {
	data, _ := os.ReadFile(o.Log)
	return string(data)
}

func exitError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
		return nil
	}
	return err
}

// FreeAddr returns a loopback address whose port nothing listens on right now, so that test
// processes sharing a machine do not collide on fixed ports.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// WaitServing waits, up to a minute, until mgr's webhook server serves and its cache has
// synced.
func WaitServing(ctx context.Context, mgr manager.Manager) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	check := mgr.GetWebhookServer().StartedChecker()
	for check(&http.Request{}) != nil {
		select {
		case <-ctx.Done():
			return fmt.Errorf("webhook server not serving: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("the manager's cache did not sync")
	}
	return nil
}

// InflightLimits returns the kube-apiserver flags that set its server concurrency limit, the
// sum of the two: readOnly (--max-requests-inflight) and mutating
// (--max-mutating-requests-inflight).
func InflightLimits(readOnly, mutating int) map[string]string {
	return map[string]string{
		"max-requests-inflight":          strconv.Itoa(readOnly),
		"max-mutating-requests-inflight": strconv.Itoa(mutating),
	}
}
