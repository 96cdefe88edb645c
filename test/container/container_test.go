package container

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/apf-operator/apf-operator/test/harness"
)

// podName is the container's hostname, as a pod's is its name: leader election's identity
// starts with it.
const podName = "apf-operator-podman-0"

// TestImageInPodman loads `make image`'s archive into podman and runs it with the pod spec of
// the chart's Deployment (read back from the API server after `helm install`) against a real
// kube-apiserver: in-cluster credentials from a service-account token bound to the chart's
// RBAC, webhooks reached through the chart's Service. It checks the defaults, a refused
// manifest, the native projection, the Lease, the probes and SIGTERM, and logs the container's
// log and RSS (docs/container.md). Set APF_CONTAINER_LOG to a file to keep the log.
func TestImageInPodman(t *testing.T) {
	start := time.Now()
	p := newPodman(t)
	archive := buildImage(t)
	c := startCluster(t)
	ctx := context.Background()

	webhookPort, metricsPort := freePort(t), freePort(t)
	c.helmInstall(t, fmt.Sprintf("webhook.port=%d", webhookPort), fmt.Sprintf("metrics.port=%d", metricsPort))
	d := c.deployment(t, ctx)

	run, token := startContainer(t, ctx, p, c, d, archive)
	checkProbes(t, run)
	checkForbidden(t, ctx, c, token)
	checkDefaults(t, ctx, c, d)
	checkWebhook(t, ctx, c)
	checkProjection(t, ctx, c)
	leaseName, err := argValue(d.Spec.Template.Spec.Containers[0].Args, "--leader-election-id")
	if err != nil {
		t.Fatal(err)
	}
	checkLeaseHeld(t, ctx, c, leaseName)
	logCreated(t, ctx, c)
	state := p.inspect(t, "apf-operator")
	checkProcess(t, state.State.Pid, p.imageUser(t, run.Image), d)
	rss, err := rssKiB(state.State.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RSS of the container's process (pid %d on the host), defaults and projection done: %d KiB (%.1f MiB)", state.State.Pid, rss, float64(rss)/1024)
	checkSIGTERM(t, ctx, p, c, run, leaseName)
	saveLog(t, p)
	t.Logf("the whole test took %s", time.Since(start).Round(time.Second))
}

// startContainer plays the kubelet: token, Secret volume, endpoint; then loads the image and
// runs the translated pod spec, and waits for readiness.
func startContainer(t *testing.T, ctx context.Context, p *podman, c *cluster, d *appsv1.Deployment, archive string) (*Run, string) {
	t.Helper()
	saDir, token := c.serviceAccountToken(t, ctx, d.Spec.Template.Spec.ServiceAccountName)
	secretDirs := map[string]string{}
	syncCtx, stopSync := context.WithCancel(ctx)
	t.Cleanup(stopSync)
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			dir := readableDir(t, v.Secret.SecretName)
			secretDirs[v.Secret.SecretName] = dir
			go c.syncSecret(syncCtx, t, v.Secret.SecretName, dir)
		}
	}
	host, port := c.apiHostPort(t)
	run, err := Translate(d, "apf-operator", Kubelet{PodName: podName, Namespace: namespace, APIHost: host, APIPort: port,
		ServiceAccountDir: saDir, SecretDirs: secretDirs})
	if err != nil {
		t.Fatalf("translating the chart's pod spec: %v", err)
	}
	if run.Readiness != nil {
		requirePortFree(t, run.Readiness.Port)
	}
	c.publishEndpoint(t, ctx, c.service(t, ctx, release+"-webhook"), hostIP(t), func(target intstr.IntOrString) int32 {
		if target.IntValue() > 0 {
			return int32(target.IntValue())
		}
		n, err := ContainerPort(d, target.String())
		if err != nil {
			t.Fatalf("the webhook Service's targetPort: %v", err)
		}
		return n
	})

	t.Logf("podman load: %s", p.must(t, "load", "--input", archive))
	t.Logf("podman run %s version: %s", run.Image, p.must(t, "run", "--rm", "--network", "none", run.Image, "version"))
	if user := p.imageUser(t, run.Image); run.RunAsNonRoot && !nonRootUser(user) {
		t.Fatalf("runAsNonRoot: the image %s runs as %q, which the kubelet would refuse", run.Image, user)
	}
	t.Logf("podman %s", strings.Join(run.Args, " "))
	p.must(t, run.Args...)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := p.run("logs", "apf-operator")
			t.Logf("container log:\n%s", out)
		}
		_, _ = p.run("rm", "--force", "--time", "0", "apf-operator")
	})
	return run, token
}

// checkProbes: the readiness probe passes (the webhooks serve, behind their certificate), then
// both probes answer 200 on the port the chart names.
func checkProbes(t *testing.T, run *Run) {
	t.Helper()
	start := time.Now()
	for _, probe := range []*HTTPProbe{run.Readiness, run.Liveness} {
		if probe == nil {
			t.Fatal("the chart's container has no readiness or no liveness probe")
		}
		url := fmt.Sprintf("http://127.0.0.1:%d%s", probe.Port, probe.Path)
		harness.Eventually(t, 3*time.Minute, url+" to answer 200", func() error { return get200(url) })
		t.Logf("%s: 200 after %s", url, time.Since(start).Round(100*time.Millisecond))
	}
}

func get200(url string) error {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// checkForbidden: the container's credentials are the chart's RBAC and no more: kube-apiserver
// authorizes with RBAC, not AlwaysAllow, so reading Secrets outside the operator's namespace is
// forbidden.
func checkForbidden(t *testing.T, ctx context.Context, c *cluster, token string) {
	t.Helper()
	_, err := c.tokenClient(token).CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing Secrets in kube-system with the operator's token: %v; want Forbidden (RBAC)", err)
	}
	t.Logf("with the operator's token, list secrets in kube-system: %v", err)
}

// saveLog logs the container's log and writes it to $APF_CONTAINER_LOG when set.
func saveLog(t *testing.T, p *podman) {
	t.Helper()
	out := p.must(t, "logs", "apf-operator")
	t.Logf("container log (%d lines):\n%s", strings.Count(out, "\n")+1, out)
	if path := os.Getenv("APF_CONTAINER_LOG"); path != "" {
		if err := os.WriteFile(path, []byte(out+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}
