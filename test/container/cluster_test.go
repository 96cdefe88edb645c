package container

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

const (
	release   = "apf-operator"
	namespace = "apf-operator-system"
)

// envtest logs through controller-runtime's logger; the test reports through t.
func init() { log.SetLogger(logr.Discard()) }

// cluster is the test control plane with the chart installed.
type cluster struct {
	cfg        *rest.Config
	kube       *kubernetes.Clientset
	kubeconfig string
	assets     string
}

// startCluster starts kube-apiserver and etcd. kube-apiserver authorizes with RBAC (envtest's
// default; the test proves it with a forbidden request) and, with aggregator routing, resolves a
// webhook's Service to its endpoints rather than to its cluster IP, which nothing routes here:
// so the webhook calls go through the chart's Service to the container.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	bare := envtestutil.StartBare(t, map[string]string{"enable-aggregator-routing": "true"})
	return &cluster{cfg: bare.Config, kube: kubernetes.NewForConfigOrDie(bare.Config), kubeconfig: bare.Kubeconfig, assets: bare.Assets}
}

// apiHostPort is kube-apiserver's address, for KUBERNETES_SERVICE_HOST and _PORT.
func (c *cluster) apiHostPort(t *testing.T) (string, string) {
	t.Helper()
	u, err := url.Parse(c.cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname(), u.Port()
}

// helmInstall installs the chart with `helm install`, as docs/install.md does, with the values
// given; helm's own files go to a test directory.
func (c *cluster) helmInstall(t *testing.T, set ...string) {
	t.Helper()
	helm, err := envtestutil.Tool("helm")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"install", release, filepath.Join(envtestutil.RepoRoot(), "charts", "apf-operator"),
		"--namespace", namespace, "--create-namespace"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	home := t.TempDir()
	cmd := exec.Command(helm, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig, "HOME="+home, "XDG_CACHE_HOME="+home,
		"XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

// deployment reads the chart's Deployment back from the API server: the pod spec the test runs.
func (c *cluster) deployment(t *testing.T, ctx context.Context) *appsv1.Deployment {
	t.Helper()
	d, err := c.kube.AppsV1().Deployments(namespace).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// service reads one of the chart's Services.
func (c *cluster) service(t *testing.T, ctx context.Context, name string) *corev1.Service {
	t.Helper()
	s, err := c.kube.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// freePort returns a TCP port nothing listens on now. The container shares the host's network
// (the control plane listens on the host's loopback), so the chart's configurable ports are
// moved off their defaults, which other tests' servers may hold.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// requirePortFree fails the test when something listens on a port the chart fixes (the health
// probe's), rather than letting the container fail to bind it.
func requirePortFree(t *testing.T, port int32) {
	t.Helper()
	l, err := net.Listen("tcp", ":"+strconv.Itoa(int(port)))
	if err != nil {
		t.Fatalf("port %d, which the chart's Deployment fixes and the container binds on the host's network, is in use: %v", port, err)
	}
	l.Close()
}

// hostIP is an address of this machine other than loopback: an EndpointSlice may not hold a
// loopback address, and the container, on the host's network, serves on every address.
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
			return ipn.IP.String()
		}
	}
	t.Fatal("this machine has no non-loopback IPv4 address for the webhook Service's endpoint")
	return ""
}

// buildImage runs `make image` for this machine's platform into a test directory, or returns
// $APF_IMAGE_ARCHIVE when set (an archive `make image` already wrote).
func buildImage(t *testing.T) string {
	t.Helper()
	if archive := os.Getenv("APF_IMAGE_ARCHIVE"); archive != "" {
		return archive
	}
	archive := filepath.Join(t.TempDir(), "apf-operator.oci.tar")
	start := time.Now()
	cmd := exec.Command("make", "image", "IMAGE_PLATFORMS=linux/"+runtime.GOARCH, "IMAGE_ARCHIVE="+archive)
	cmd.Dir = envtestutil.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image (linux/%s) took %s", runtime.GOARCH, time.Since(start).Round(time.Second))
	return archive
}

// argValue returns the value of --name=value among args.
func argValue(args []string, name string) (string, error) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("no %s= among %q", name, args)
}
