package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

// generatedWebhookConfig is the name controller-gen gives the webhook configuration in
// config/webhook, which the harness installs.
const generatedWebhookConfig = "validating-webhook-configuration"

// testCertRotation runs the operator as the chart does by default: it makes its own CA and
// serving certificate, stores them in its Secret, injects the CA into the webhook
// configuration, and only then serves the webhooks. The API server must then reach the
// webhooks through the new CA.
func testCertRotation(t *testing.T) {
	ctx := context.Background()
	var before admissionregistrationv1.ValidatingWebhookConfiguration
	if err := k8s.Get(ctx, client.ObjectKey{Name: generatedWebhookConfig}, &before); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rotation-test-tls", Namespace: chartNamespace}}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := operator.Stop(20 * time.Second); err != nil {
		t.Fatalf("stopping the operator: %v", err)
	}
	certDir := t.TempDir()
	args := append(cluster.OperatorArgs("0"), "--cert-rotation=true", "--namespace", chartNamespace,
		"--webhook-cert-dir", certDir, "--webhook-secret-name", secret.Name,
		"--webhook-service-name", "localhost", "--webhook-config-name", generatedWebhookConfig)
	var err error
	if operator, err = restartOperator(args...); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "the rotated CA in the webhook configuration", func(ctx context.Context) (bool, error) {
		var now admissionregistrationv1.ValidatingWebhookConfiguration
		if err := k8s.Get(ctx, client.ObjectKey{Name: generatedWebhookConfig}, &now); err != nil {
			return false, err
		}
		for i := range now.Webhooks {
			if bytes.Equal(now.Webhooks[i].ClientConfig.CABundle, before.Webhooks[i].ClientConfig.CABundle) {
				return false, nil
			}
		}
		return true, nil
	})
	harness.Eventually(t, 30*time.Second, "the certificate in the operator's Secret", func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)
		return err == nil && len(secret.Data["tls.crt"]) > 0 && len(secret.Data["tls.key"]) > 0, err
	})
	projectSecret(t, secret, certDir)
	harness.Eventually(t, 30*time.Second, "the webhooks to answer with the rotated certificate", func(ctx context.Context) (bool, error) {
		_, stderr, err := cluster.KubectlRun(ctx, strings.NewReader(invalidManifest), "apply", "--server-side", "-f", "-")
		if err == nil {
			t.Fatal("the invalid manifest was accepted while the webhooks rotate their certificate")
		}
		return strings.Contains(stderr, "ff(queuesPerWidth=64, handSize=12)"), nil
	})
	if exited, exitErr := operator.Exited(); exited {
		t.Fatalf("the operator exited: %v\n%s", exitErr, operator.ReadLog())
	}
}

// projectSecret does what the kubelet does for the chart's Secret volume at the cert dir:
// the operator reads its rotated certificate from files, not from the API.
func projectSecret(t *testing.T, secret *corev1.Secret, dir string) {
	t.Helper()
	for _, key := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if data, ok := secret.Data[key]; ok {
			if err := os.WriteFile(filepath.Join(dir, key), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}
