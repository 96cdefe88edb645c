package autopilot_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

// loadLabel marks the namespaces whose ConfigMap creations the slow webhook holds.
const loadLabel = "autopilot-test/load"

// slowWebhook is a validating admission webhook that answers "allowed" after a fixed delay.
// kube-apiserver calls admission inside the request's APF seat, so every tenant request
// occupies one seat for the delay plus a few milliseconds: the seat demand of a tenant is its
// request rate times the delay, whatever the machine's CPU load (the requests are dry-run
// creations, so nothing is stored).
type slowWebhook struct {
	server *http.Server
	delay  time.Duration
}

// startSlowWebhook serves the webhook over TLS with envtest's webhook serving certificate (it
// names localhost) on a free port, and registers it for ConfigMap creations in namespaces
// labelled loadLabel.
func startSlowWebhook(c *harness.Cluster, delay time.Duration) (*slowWebhook, error) {
	w := c.Env.WebhookInstallOptions
	cert, err := tls.LoadX509KeyPair(filepath.Join(w.LocalServingCertDir, "tls.crt"), filepath.Join(w.LocalServingCertDir, "tls.key"))
	if err != nil {
		return nil, err
	}
	addr, err := harness.FreeAddr()
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	s := &slowWebhook{delay: delay}
	s.server = &http.Server{Handler: http.HandlerFunc(s.review), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.server.Serve(ln) }()
	_, port, _ := net.SplitHostPort(addr)
	if err := registerSlowWebhook(c, "https://localhost:"+port+"/slow", w.LocalServingCAData); err != nil {
		return nil, fmt.Errorf("registering the slow webhook: %w (%v)", err, s.server.Close())
	}
	return s, nil
}

// Close stops serving.
func (s *slowWebhook) Close() { _ = s.server.Close() }

// review waits the delay and allows the request.
func (s *slowWebhook) review(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	select {
	case <-time.After(s.delay):
	case <-r.Context().Done():
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

func registerSlowWebhook(c *harness.Cluster, url string, caBundle []byte) error {
	k8s, err := client.New(c.Config, client.Options{})
	if err != nil {
		return err
	}
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "autopilot-test-slow"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "slow.autopilot-test.example.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{loadLabel: "true"}},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			TimeoutSeconds:          ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return k8s.Create(ctx, cfg)
}
