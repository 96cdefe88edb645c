package operator

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// caBundle is a CA bundle file and the pool last read from it. The file is checked on every
// TLS handshake (one stat; kube-apiserver keeps its connections, so handshakes are rare) and
// read again when it changed, so a CA rotated in the mounted ConfigMap or Secret takes effect
// without a restart. A changed file that does not parse keeps the previous pool.
type caBundle struct {
	path string

	mu      sync.Mutex
	pool    *x509.CertPool
	modTime time.Time
	size    int64
}

// validateClientCAFile reads and parses the client CA bundle at path, when set, so that a wrong
// path or file stops the operator at start with the flag's name.
func validateClientCAFile(path string) error {
	if path == "" {
		return nil
	}
	_, err := loadCABundle(path)
	return err
}

// loadCABundle returns the bundle of the file at path, read once.
func loadCABundle(path string) (*caBundle, error) {
	b := &caBundle{path: path}
	if _, err := b.load(); err != nil {
		return nil, fmt.Errorf("--webhook-client-ca-file=%q: %w", path, err)
	}
	return b, nil
}

// current returns the pool, read again first when the file changed since the last read.
func (b *caBundle) current() *x509.CertPool {
	pool, err := b.load()
	if err != nil {
		ctrl.Log.WithName("webhook").Error(err, "Keeping the previous webhook client CA bundle", "file", b.path)
	}
	return pool
}

// load reads the file when its modification time or size changed, and returns the pool; on
// an error it returns the previous pool (nil before the first successful read).
func (b *caBundle) load() (*x509.CertPool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	info, err := os.Stat(b.path)
	if err != nil {
		return b.pool, err
	}
	if b.pool != nil && info.ModTime().Equal(b.modTime) && info.Size() == b.size {
		return b.pool, nil
	}
	data, err := os.ReadFile(b.path)
	if err != nil {
		return b.pool, err
	}
	pool, err := parseCABundle(data)
	if err != nil {
		return b.pool, err
	}
	b.pool, b.modTime, b.size = pool, info.ModTime(), info.Size()
	return pool, nil
}

// parseCABundle returns the pool of the PEM CERTIFICATE blocks in data, and an error when there
// is none or one does not parse.
func parseCABundle(data []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, errors.New("no PEM CERTIFICATE block: give the CA that signed kube-apiserver's webhook client certificate")
	}
	return pool, nil
}

// webhookTLSOpts returns the webhook server's TLS options: base, then, with a client CA file,
// client certificates required and verified against the file's current bundle.
func webhookTLSOpts(clientCAFile string, base ...func(*tls.Config)) ([]func(*tls.Config), error) {
	if clientCAFile == "" {
		return base, nil
	}
	bundle, err := loadCABundle(clientCAFile)
	if err != nil {
		return nil, err
	}
	return append(base, bundle.requireClientCerts), nil
}

// requireClientCerts makes c require client certificates signed by a CA of the bundle, read
// again at each handshake when the file changed.
func (b *caBundle) requireClientCerts(c *tls.Config) {
	c.ClientAuth = tls.RequireAndVerifyClientCert
	c.ClientCAs = b.current()
	// c is complete (the serving certificate included) by the time a client says hello.
	c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		per := c.Clone()
		per.ClientCAs, per.GetConfigForClient = b.current(), nil
		return per, nil
	}
}
