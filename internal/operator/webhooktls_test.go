package operator

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// testCA is a CA that signs serving and client certificates for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate and key in PEM signed by ca: a serving one for 127.0.0.1, or a
// client one.
func (ca *testCA) issue(t *testing.T, cn string, client bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startWebhookServer runs controller-runtime's webhook server as the manager builds it (with
// the TLS options of clientCAFile) on a free loopback port, serving /ping, and returns its
// address.
func startWebhookServer(t *testing.T, serving *testCA, clientCAFile string) string {
	t.Helper()
	dir := t.TempDir()
	certPEM, keyPEM := serving.issue(t, "webhook", false)
	writeFile(t, filepath.Join(dir, "tls.crt"), certPEM)
	writeFile(t, filepath.Join(dir, "tls.key"), keyPEM)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	tlsOpts, err := webhookTLSOpts(clientCAFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir, TLSOpts: tlsOpts})
	srv.Register("/ping", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("pong")) }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("webhook server: %v", err)
		}
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatal("the webhook server did not listen within 10 s")
		}
	}
}

// ping calls /ping over TLS trusting serving, presenting cert/key when given.
func ping(addr string, serving *testCA, certPEM, keyPEM []byte) error {
	roots := x509.NewCertPool()
	roots.AddCert(serving.cert)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + addr + "/ping")
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &statusError{resp.StatusCode}
	}
	return nil
}

type statusError struct{ code int }

func (e *statusError) Error() string { return "HTTP " + strconv.Itoa(e.code) }

// TestWebhookClientCA: with Webhooks.ClientCAFile (--webhook-client-ca-file) the webhook server refuses, in the TLS
// handshake, a caller without a client certificate and one whose certificate another CA
// signed, and serves one with a certificate the configured CA signed. Without the flag it
// serves any caller.
func TestWebhookClientCA(t *testing.T) {
	serving, clients, other := newTestCA(t, "serving"), newTestCA(t, "apiserver-clients"), newTestCA(t, "other")
	dir := t.TempDir()
	addr := startWebhookServer(t, serving, writeFile(t, filepath.Join(dir, "ca.crt"), clients.pem))
	if err := ping(addr, serving, nil, nil); err == nil {
		t.Error("a caller without a client certificate was served")
	}
	otherCert, otherKey := other.issue(t, "intruder", true)
	if err := ping(addr, serving, otherCert, otherKey); err == nil {
		t.Error("a caller with a certificate of another CA was served")
	}
	goodCert, goodKey := clients.issue(t, "kube-apiserver", true)
	if err := ping(addr, serving, goodCert, goodKey); err != nil {
		t.Errorf("a caller with a certificate of the client CA: %v, want served", err)
	}

	open := startWebhookServer(t, serving, "")
	if err := ping(open, serving, nil, nil); err != nil {
		t.Errorf("without --webhook-client-ca-file a caller without a certificate: %v, want served", err)
	}
}

// TestWebhookClientCAFileErrors: a missing or certificate-less file stops the manager at start
// with the flag's name.
func TestWebhookClientCAFileErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ path, want string }{
		"missing":  {filepath.Join(dir, "absent.crt"), "no such file or directory"},
		"no certs": {writeFile(t, filepath.Join(dir, "key.pem"), []byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n")), "no PEM CERTIFICATE block"},
		"garbage":  {writeFile(t, filepath.Join(dir, "bad.crt"), []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")), "certificate 1:"},
	} {
		o := NewOptions()
		o.Namespace, o.Webhooks.ClientCAFile = "x", c.path
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--webhook-client-ca-file") {
			t.Errorf("%s: %v, want an error naming the flag and containing %q", name, err, c.want)
		}
	}
}

// TestWebhookClientCAReloaded: a CA bundle rotated in the file takes effect at the next
// handshake without a restart; a changed file that does not parse keeps the previous bundle.
func TestWebhookClientCAReloaded(t *testing.T) {
	serving, oldCA, newCA := newTestCA(t, "serving"), newTestCA(t, "old-clients"), newTestCA(t, "new-clients")
	path := writeFile(t, filepath.Join(t.TempDir(), "ca.crt"), oldCA.pem)
	addr := startWebhookServer(t, serving, path)
	oldCert, oldKey := oldCA.issue(t, "old", true)
	newCert, newKey := newCA.issue(t, "new", true)
	if ping(addr, serving, oldCert, oldKey) != nil || ping(addr, serving, newCert, newKey) == nil {
		t.Fatal("before the rotation: want the old CA's client served and the new CA's refused")
	}
	rewrite := func(data []byte, age time.Duration) {
		writeFile(t, path, data)
		// A modification time of its own, whatever the file system's timestamp resolution.
		if err := os.Chtimes(path, time.Now(), time.Now().Add(age)); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(newCA.pem, time.Minute)
	if ping(addr, serving, newCert, newKey) != nil || ping(addr, serving, oldCert, oldKey) == nil {
		t.Fatal("after the rotation: want the new CA's client served and the old CA's refused")
	}
	rewrite([]byte("not a certificate"), 2*time.Minute)
	if err := ping(addr, serving, newCert, newKey); err != nil {
		t.Fatalf("after a broken rewrite: %v; want the previous bundle kept", err)
	}
}
