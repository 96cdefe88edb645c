package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// TestProductionOptionsServe runs New with production's options against a real kube-apiserver
// (envtest), as the chart deploys it: leader election, default objects, the webhooks with the
// in-process certificate rotation. Only the addresses (free loopback ports, a temporary
// certificate directory, no metrics server) and the metrics registry differ. Within a minute
// the rotator fills the chart's empty Secret and the ValidatingWebhookConfiguration's caBundle;
// once the certificate is in the directory (the test plays the kubelet), the webhooks are
// registered and served (readiness passes, the webhook check included), the
// replica holds the Lease, and the defaults exist.
func TestProductionOptionsServe(t *testing.T) {
	logs := &lockedBuffer{}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the operator's log:\n%s", logs.String())
		}
	})
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := client.New(cfg, client.Options{Scheme: managerbase.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.Namespace, o.ServiceAccount = "apf-system", "apf-operator"
	createChartObjects(t, admin, &o)

	probe := freeAddress(t)
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", probe
	o.Webhooks.Port, o.Webhooks.CertDir = freePort(t), t.TempDir()
	o.Testing.WebhookHost, o.Testing.Registerer = "127.0.0.1", prometheus.NewRegistry()
	o.Testing.SkipNameValidation = true // -count=2 runs it again in this process
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the operator stopped with %v", err)
		}
	})

	harness.Eventually(t, time.Minute, "the certificate", func() error { return certificateInjected(admin, &o) })
	mountSecret(t, admin, &o)
	harness.Eventually(t, time.Minute, "readiness", func() error { return ready(probe) })
	harness.Eventually(t, time.Minute, "the Lease", func() error {
		var lease coordinationv1.Lease
		if err := admin.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.LeaderElection.ID}, &lease); err != nil {
			return err
		}
		if ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
			return errors.New("no holder")
		}
		return nil
	})
	harness.Eventually(t, time.Minute, "the defaults", func() error {
		want := defaults.Native().RequestPriorities()[0].Name
		var rp flowv1.RequestPriority
		if err := admin.Get(ctx, client.ObjectKey{Name: want}, &rp); err != nil {
			return err
		}
		if rp.Labels[flowv1.LabelManagedBy] != flowv1.ManagedByValue {
			return fmt.Errorf("RequestPriority %s labels %v: not the operator's", want, rp.Labels)
		}
		return nil
	})
}

// createChartObjects creates what the chart creates beside the Deployment: the namespace, the
// empty Secret the rotator fills, and the ValidatingWebhookConfiguration whose caBundle it
// keeps current (here with a rule nobody triggers: kube-apiserver cannot reach the Service).
func createChartObjects(t *testing.T, c client.Client, o *Options) {
	t.Helper()
	ctx := context.Background()
	rule := admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"example.invalid"}, APIVersions: []string{"v1"}, Resources: []string{"nothings"}}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Webhooks.SecretName}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: o.Webhooks.ConfigName},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "nothing.apf-operator.io", SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"}, FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
				ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
					Namespace: o.Namespace, Name: o.Webhooks.ServiceName, Path: ptr.To("/validate")}},
				Rules: []admissionregistrationv1.RuleWithOperations{rule},
			}}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

// certificateInjected reports whether the rotator has filled the Secret and copied its CA into
// the ValidatingWebhookConfiguration.
func certificateInjected(c client.Client, o *Options) error {
	ctx := context.Background()
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Webhooks.SecretName}, &secret); err != nil {
		return err
	}
	ca := secret.Data["ca.crt"]
	if len(ca) == 0 || len(secret.Data["tls.crt"]) == 0 {
		return errors.New("the Secret holds no certificate")
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: o.Webhooks.ConfigName}, &vwc); err != nil {
		return err
	}
	if got := vwc.Webhooks[0].ClientConfig.CABundle; !bytes.Equal(got, ca) {
		return fmt.Errorf("caBundle of %d bytes, want the Secret's CA (%d bytes)", len(got), len(ca))
	}
	return nil
}

// mountSecret writes the certificate of the Secret to Webhooks.CertDir, as the kubelet does
// with the chart's Secret volume.
func mountSecret(t *testing.T, c client.Client, o *Options) {
	t.Helper()
	var secret corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: o.Namespace, Name: o.Webhooks.SecretName}, &secret); err != nil {
		t.Fatal(err)
	}
	for name, data := range secret.Data {
		if err := os.WriteFile(filepath.Join(o.Webhooks.CertDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// lockedBuffer is a buffer that several goroutines write.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ready reports whether the operator's /readyz, the webhook check included, passes.
func ready(addr string) error {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/readyz?verbose")
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body.Bytes(), []byte("[+]webhook ok")) {
		return fmt.Errorf("/readyz: %s\n%s", resp.Status, body.String())
	}
	return nil
}

func freeAddress(t *testing.T) string {
	return "127.0.0.1:" + strconv.Itoa(freePort(t))
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}
