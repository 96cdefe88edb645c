package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/pkg/apf"
)

// reply is what the test looks at in a response.
type reply struct {
	status               int
	retryAfter           string
	flowSchema, priority string
	body                 []byte
}

// do sends r with c and reads the whole reply.
func do(c *http.Client, r *http.Request) (reply, error) {
	resp, err := c.Do(r)
	if err != nil {
		return reply{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"),
		flowSchema: resp.Header.Get(apf.HeaderFlowSchema), priority: resp.Header.Get(apf.HeaderRequestPriority),
		body: body}, err
}

// get sends GET url with c.
func get(c *http.Client, url string, header http.Header) (reply, error) {
	r, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return reply{}, err
	}
	for k, v := range header {
		r.Header[k] = v
	}
	return do(c, r)
}

// post sends body as JSON to url with c.
func post(c *http.Client, url string, body []byte) (reply, error) {
	r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	r.Header.Set("Content-Type", "application/json")
	return do(c, r)
}

// apiURL is the URL of path on the API server of cfg.
func apiURL(cfg *rest.Config, path string) string { return strings.TrimSuffix(cfg.Host, "/") + path }

// impersonating is an HTTP client for kube-apiserver that acts as user with the credentials
// of cfg (the admin, who may impersonate anyone).
func impersonating(t *testing.T, cfg *rest.Config, user string) *http.Client {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return httpClientFor(t, cfg)
}

// httpClientFor is rest.HTTPClientFor, failing the test on error.
func httpClientFor(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Timeout = 30 * time.Second
	return c
}

// direct is an HTTP client for the sample server itself, trusting servingCA and presenting
// the client certificate pair (PEM) when certPEM is not nil.
func direct(t *testing.T, servingCA []byte, certPEM, keyPEM []byte) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(servingCA) {
		t.Fatal("the serving CA is not PEM")
	}
	tlsConfig := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		tlsConfig.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
}
