package requestheader_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/requestheader"
)

// authority is a test CA.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newAuthority(t *testing.T, name string) *authority {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &authority{cert: cert, key: key}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// clientCert issues a client certificate with common name cn.
func (a *authority) clientCert(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (a *authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// server is a TLS server requesting (not requiring) client certificates, as an API server's
// listener does, with a Filter whose identity comes from verified front-proxy headers.
func server(t *testing.T, ca *authority) *httptest.Server {
	t.Helper()
	id, err := requestheader.New(requestheader.Options{ClientCA: ca.pool(), AllowedNames: []string{"front-proxy-client"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 10, Identity: id})
	if err != nil {
		t.Fatal(err)
	}
	rp := v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Spec: v1alpha1.RequestPrioritySpec{
		PriorityLevel: 100, AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](10)}}
	anonymous := v1alpha1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "anonymous"}, Spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority: 10, RequestPriority: v1alpha1.RequestPriorityReference{Name: "low"},
		Match: []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{
			{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldUser, Value: apf.AnonymousUser}}}}}}}
	f.Update([]v1alpha1.RequestPriority{rp}, []v1alpha1.FlowSchema{anonymous})
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-User", r.Header.Get("X-Remote-User")) // the handler still sees the header
	})
	srv := httptest.NewUnstartedServer(f.Handler(api))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// spoof sends X-Remote-User: x, X-Remote-Group: system:masters with the given client
// certificate (none if nil) and returns the FlowSchema of the response.
func spoof(t *testing.T, srv *httptest.Server, cert *tls.Certificate) string {
	t.Helper()
	client := srv.Client()
	transport := client.Transport.(*http.Transport).Clone()
	if cert != nil {
		transport.TLSClientConfig.Certificates = []tls.Certificate{*cert}
	}
	client.Transport = transport
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/kube-system/secrets", nil)
	req.Header.Set("X-Remote-User", "x")
	req.Header.Set("X-Remote-Group", "system:masters")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Seen-User") != "x" {
		t.Errorf("the API handler saw X-Remote-User %q; want the request unchanged", resp.Header.Get("X-Seen-User"))
	}
	return resp.Header.Get(apf.HeaderFlowSchema)
}

// TestSpoofedHeadersAreNotBelieved: without a certificate of the front-proxy CA with an allowed
// common name, X-Remote-Group: system:masters does not reach the exempt system-top backstop;
// the request is anonymous. With one, the headers are believed.
func TestSpoofedHeadersAreNotBelieved(t *testing.T) {
	ca := newAuthority(t, "front-proxy-ca")
	srv := server(t, ca)
	other := newAuthority(t, "attacker-ca").clientCert(t, "front-proxy-client")
	wrongName := ca.clientCert(t, "someone-else")
	proxy := ca.clientCert(t, "front-proxy-client")
	for _, tc := range []struct {
		name string
		cert *tls.Certificate
		want string
	}{
		{"no client certificate", nil, "anonymous"},
		{"certificate of another CA", &other, "anonymous"},
		{"certificate with a name not allowed", &wrongName, "anonymous"},
		{"verified front proxy", &proxy, "system-top"},
	} {
		if got := spoof(t, srv, tc.cert); got != tc.want {
			t.Errorf("%s: FlowSchema %q; want %q", tc.name, got, tc.want)
		}
	}
}

func TestContextUserWins(t *testing.T) {
	id, err := requestheader.New(requestheader.Options{ClientCA: x509.NewCertPool()})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(apf.WithUser(r.Context(), "alice", []string{"devs"}))
	if name, _, ok := id.Identity(r); !ok || name != "alice" {
		t.Errorf("Identity = %q, %v; want the context's alice", name, ok)
	}
}

func TestNewRequiresClientCA(t *testing.T) {
	if _, err := requestheader.New(requestheader.Options{}); err == nil {
		t.Error("New without ClientCA succeeded")
	}
}
