// Package webhookhardening tests the webhook server's caller checks and what a hung operator
// costs event writes, with the real apf-operator binary as a separate process against a real
// kube-apiserver (envtest) that calls the generated webhook configuration:
//
//   - the operator runs with --webhook-client-ca-file; kube-apiserver authenticates to the
//     webhooks with a client certificate from its admission kubeconfig (AdmissionConfiguration,
//     WebhookAdmission kubeConfigFile), as docs/install.md tells a platform team to configure
//     it. A direct caller without a certificate fails the TLS handshake;
//   - with the events webhook on (timeoutSeconds 1, failurePolicy Ignore), an operator stopped
//     with SIGSTOP adds at most the timeout to each event creation, and every event is created.
package webhookhardening

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

var (
	cluster  *harness.Cluster
	k8s      client.Client
	operator *harness.Operator
	// webhookAddr is where the operator's webhook server listens (host:port).
	webhookAddr string
	// clientCA signs kube-apiserver's webhook client certificate; apiServerCert/Key is that
	// certificate, which the tests also use as a legitimate direct caller.
	clientCA                    *testCA
	apiServerCert, apiServerKey []byte
)

// namespace holds the test's events.
const namespace = "hardening"

var suite = &harness.Suite{
	Name:               "webhookhardening",
	ControlPlane:       &harness.ControlPlane{Flags: map[string]string{}},
	BeforeControlPlane: configureAdmission,
	BeforeOperator:     createNamespaces,
	RunOperator:        true,
	Ready:              waitWebhook,
}

func TestMain(m *testing.M) { harness.Main(m, suite) }

// configureAdmission gives kube-apiserver the admission configuration with its webhook client
// certificate, and the operator the client CA it requires, with the events webhook on.
func configureAdmission(s *harness.Suite) error {
	admissionConfig, err := writeAdmissionConfig(s.Dir)
	if err != nil {
		return err
	}
	s.ControlPlane.Flags["admission-control-config-file"] = admissionConfig
	s.OperatorArgs = []string{"--enable-event-rate-limit=true", "--webhook-client-ca-file=" + filepath.Join(s.Dir, "client-ca.crt"),
		"--manage-defaults=false", "--enforcement=none"}
	return nil
}

// writeAdmissionConfig makes the client CA and kube-apiserver's client certificate, and writes
// the CA bundle (for the operator), the admission kubeconfig and the AdmissionConfiguration
// (for kube-apiserver) into dir; it returns the AdmissionConfiguration's path.
func writeAdmissionConfig(dir string) (string, error) {
	var err error
	if clientCA, err = newTestCA("webhook-clients"); err != nil {
		return "", err
	}
	if apiServerCert, apiServerKey, err = clientCA.issueClient("kube-apiserver"); err != nil {
		return "", err
	}
	kubeconfig := filepath.Join(dir, "admission-kubeconfig")
	config := filepath.Join(dir, "admission-config.yaml")
	files := map[string][]byte{
		filepath.Join(dir, "client-ca.crt"): clientCA.pem,
		kubeconfig:                          admissionKubeconfig(apiServerCert, apiServerKey),
		config:                              admissionConfiguration(kubeconfig),
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return "", err
		}
	}
	return config, nil
}

// createNamespaces creates the operator's namespace and the one of the test's events.
func createNamespaces(s *harness.Suite) error {
	cluster, k8s = s.Cluster, s.Client
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range []string{"apf-system", namespace} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	return nil
}

// waitWebhook waits until the operator's webhook server serves a caller with kube-apiserver's
// certificate.
func waitWebhook(s *harness.Suite) error {
	operator = s.Operator
	webhookAddr = "127.0.0.1:" + strconv.Itoa(cluster.Env.WebhookInstallOptions.LocalServingPort)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err := review(webhookAddr, apiServerCert, apiServerKey, "u")
		if err == nil {
			return nil
		}
		if exited, exitErr := operator.Exited(); exited {
			return fmt.Errorf("the operator exited (%v):\n%s", exitErr, operator.ReadLog())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the operator's webhook did not serve within 90 s: %v\n%s", err, operator.ReadLog())
		}
	}
}
