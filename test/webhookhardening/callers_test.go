package webhookhardening

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/harness"
)

// review posts an AdmissionReview of an event creation by user straight to the operator's
// /validate-events, as a pod that can reach the webhook port could, presenting certPEM/keyPEM
// when given, and returns the response.
func review(addr string, certPEM, keyPEM []byte, user string) (*admissionv1.AdmissionResponse, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cluster.Env.WebhookInstallOptions.LocalServingCAData) {
		return nil, errors.New("envtest's webhook serving CA does not parse")
	}
	cfg := &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	body, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "direct", Operation: admissionv1.Create,
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Event"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "events"},
			Namespace: namespace, Name: "direct",
			UserInfo: authenticationv1.UserInfo{Username: user},
		}})
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Post("https://"+addr+"/validate-events", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &out); err != nil || out.Response == nil {
		return nil, fmt.Errorf("not an AdmissionReview response (%v): %s", err, raw)
	}
	return out.Response, nil
}

// TestDirectCallerNeedsClientCertificate: with --webhook-client-ca-file, a caller without a
// client certificate, or with one another CA signed, fails the TLS handshake; a caller with a
// certificate the configured CA signed is served.
func TestDirectCallerNeedsClientCertificate(t *testing.T) {
	if _, err := review(webhookAddr, nil, nil, "u"); err == nil || !isTLSRefusal(err) {
		t.Errorf("a caller without a client certificate: %v; want the TLS handshake refused", err)
	}
	other, err := newTestCA("intruder-ca")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := other.issueClient("intruder")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := review(webhookAddr, cert, key, "u"); err == nil || !isTLSRefusal(err) {
		t.Errorf("a caller with another CA's certificate: %v; want the TLS handshake refused", err)
	}
	resp, err := review(webhookAddr, apiServerCert, apiServerKey, "u")
	if err != nil || !resp.Allowed {
		t.Errorf("a caller with a certificate of the client CA: %+v, %v; want served and allowed", resp, err)
	}
}

// isTLSRefusal tells a refused handshake (the server's alert, or the connection closed during
// or right after it) from an HTTP answer.
func isTLSRefusal(err error) bool {
	s := err.Error()
	for _, sign := range []string{"tls:", "certificate", "EOF", "connection reset", "broken pipe"} {
		if strings.Contains(s, sign) {
			return !strings.Contains(s, "HTTP ")
		}
	}
	return false
}

// TestAPIServerCallsWithClientCertificate: kube-apiserver, configured with the admission
// kubeconfig, reaches the webhooks that require client certificates: the EventRateLimit object
// passes its failurePolicy Fail webhook, and its limit then rejects event creations with 429
// (had the call failed, failurePolicy Ignore would have created every event).
func TestAPIServerCallsWithClientCertificate(t *testing.T) {
	ctx := context.Background()
	erl := &flowv1.EventRateLimit{ObjectMeta: metav1.ObjectMeta{Name: "one-per-object"},
		Spec: flowv1.EventRateLimitSpec{Limits: []flowv1.EventRateLimitLimit{
			{Type: flowv1.EventRateLimitSourceAndObject, QPS: 1, Burst: 1}}}}
	if err := k8s.Create(ctx, erl); err != nil {
		t.Fatalf("creating an EventRateLimit through the failurePolicy Fail webhook: %v", err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, erl) })
	harness.Eventually(t, 60*time.Second, "the EventRateLimit to be enforced", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(erl), erl); err != nil {
			return err
		}
		if c := apimeta.FindStatusCondition(erl.Status.Conditions, "Ready"); c == nil || c.Status != metav1.ConditionTrue ||
			erl.Status.ObservedGeneration != erl.Generation {
			return fmt.Errorf("status %+v", erl.Status)
		}
		return nil
	})
	httpClient, err := rest.HTTPClientFor(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int]int{}
	for i := range 5 {
		codes[postEvent(t, httpClient, fmt.Sprintf("limited-%d", i), "same-pod")]++
	}
	if codes[http.StatusTooManyRequests] == 0 || codes[http.StatusCreated] == 0 {
		t.Fatalf("5 events about one object in a row: replies %v; want some 201 and some 429", codes)
	}
}

// postEvent creates a core/v1 event about pod with a raw request (client-go would retry a 429)
// and returns the status code.
func postEvent(t *testing.T, c *http.Client, name, pod string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": name},
		"involvedObject": map[string]any{"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": pod, "uid": "uid-" + pod},
		"reason":         "Test", "message": "m", "type": "Normal", "source": map[string]any{"component": "test", "host": "node-1"}})
	resp, err := c.Post(strings.TrimSuffix(cluster.Config.Host, "/")+"/api/v1/namespaces/"+namespace+"/events",
		"application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("posting event %s: %v", name, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}
