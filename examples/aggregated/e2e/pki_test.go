package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// authority is a test certificate authority.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// keyPair is a certificate and its key, as PEM and as files.
type keyPair struct {
	certPEM, keyPEM   []byte
	certFile, keyFile string
}

// newAuthority makes a self-signed CA named name.
func newAuthority(t *testing.T, name string) *authority {
	t.Helper()
	key := newKey(t)
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &authority{cert: ca, key: key}
}

// pem is the CA certificate in PEM.
func (a *authority) pem() []byte { return pemCert(a.cert.Raw) }

// writeCert writes the CA certificate to dir and returns its path.
func (a *authority) writeCert(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, a.pem(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issueClient issues a client certificate for user in groups, written to dir.
func (a *authority) issueClient(t *testing.T, dir, user string, groups ...string) *keyPair {
	t.Helper()
	tmpl := leafTemplate(pkix.Name{CommonName: user, Organization: groups}, x509.ExtKeyUsageClientAuth)
	return a.issue(t, dir, user, tmpl)
}

// issueServing issues a serving certificate for the DNS names and IPs, written to dir.
func (a *authority) issueServing(t *testing.T, dir string, dnsNames []string, ips []net.IP) *keyPair {
	t.Helper()
	tmpl := leafTemplate(pkix.Name{CommonName: dnsNames[0]}, x509.ExtKeyUsageServerAuth)
	tmpl.DNSNames, tmpl.IPAddresses = dnsNames, ips
	return a.issue(t, dir, "serving", tmpl)
}

// issue signs tmpl and writes the pair as dir/name.crt and dir/name.key.
func (a *authority) issue(t *testing.T, dir, name string, tmpl *x509.Certificate) *keyPair {
	t.Helper()
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	p := &keyPair{certPEM: pemCert(der), keyPEM: keyPEM,
		certFile: filepath.Join(dir, name+".crt"), keyFile: filepath.Join(dir, name+".key")}
	if err := os.WriteFile(p.certFile, p.certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.keyFile, p.keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// leafTemplate is a one-hour leaf certificate template for subject and usage.
func leafTemplate(subject pkix.Name, usage x509.ExtKeyUsage) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial, Subject: subject, NotBefore: now.Add(-time.Minute),
		NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
}

// newKey makes a P-256 key.
func newKey(t *testing.T) crypto.Signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// pemCert encodes a DER certificate as PEM.
func pemCert(der []byte) []byte {
	out, _ := cert.EncodeCertificates(&x509.Certificate{Raw: der})
	return out
}
