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

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
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

func TestMain(m *testing.M) {
	code, err := setUp(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhookhardening set-up failed:", err)
		code = 1
	}
	os.Exit(code)
}

func setUp(m *testing.M) (code int, err error) {
	ctrllog.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "apf-hardening-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	binary, err := harness.BuildOperator(dir)
	if err != nil {
		return 1, err
	}
	admissionConfig, err := writeAdmissionConfig(dir)
	if err != nil {
		return 1, err
	}
	if cluster, err = harness.StartWith(map[string]string{"admission-control-config-file": admissionConfig}); err != nil {
		return 1, err
	}
	defer func() {
		if stopErr := cluster.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	if err := startOperator(binary, filepath.Join(dir, "client-ca.crt")); err != nil {
		return 1, err
	}
	defer func() {
		if stopErr := operator.Stop(20 * time.Second); stopErr != nil && err == nil {
			err = stopErr
		}
		if code != 0 {
			fmt.Fprintf(os.Stderr, "operator log:\n%s\n", operator.ReadLog())
		}
	}()
	return m.Run(), nil
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

// startOperator runs the binary with the events webhook on and client certificates required,
// and waits until its webhook server serves a caller with kube-apiserver's certificate.
func startOperator(binary, clientCAFile string) error {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	if err := flowv1.AddToScheme(s); err != nil {
		return err
	}
	var err error
	if k8s, err = client.New(cluster.Config, client.Options{Scheme: s}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range []string{"apf-system", namespace} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	port := cluster.Env.WebhookInstallOptions.LocalServingPort
	webhookAddr = "127.0.0.1:" + strconv.Itoa(port)
	args := append(cluster.OperatorArgs("0"), "--enable-event-rate-limit=true",
		"--webhook-client-ca-file="+clientCAFile, "--manage-defaults=false", "--enforcement=none")
	if operator, err = cluster.StartOperator(binary, args...); err != nil {
		return err
	}
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
