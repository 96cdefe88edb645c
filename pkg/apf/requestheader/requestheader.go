// Package requestheader is an apf.IdentitySource that believes the front-proxy identity headers
// (X-Remote-User, X-Remote-Group) only from a client whose TLS certificate is signed by the
// configured request-header client CA and carries an allowed common name: the contract of
// kube-apiserver's --requestheader-client-ca-file and --requestheader-allowed-names, enforced
// by k8s.io/apiserver's own request-header authenticator.
//
// Use it only for a server that clients reach through such a proxy (an aggregated API server
// behind kube-apiserver, for example) and whose TLS listener requests client certificates
// (tls.Config.ClientAuth at least tls.RequestClientCert). Every other request keeps the
// identity of the request context, or none.
package requestheader

import (
	"crypto/x509"
	"errors"
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/client-go/util/cert"

	"github.com/apf-operator/apf-operator/pkg/apf"
)

// Default header names, as kube-apiserver's aggregator sends them.
const (
	// DefaultUsernameHeader carries the user name.
	DefaultUsernameHeader = "X-Remote-User"
	// DefaultGroupHeader carries one group; it may be repeated.
	DefaultGroupHeader = "X-Remote-Group"
)

// Options configure an Identity.
type Options struct {
	// ClientCA verifies the front proxy's client certificate (kube-apiserver's
	// --requestheader-client-ca-file, also published in the kube-system/extension-apiserver-
	// authentication ConfigMap as requestheader-client-ca-file). Required.
	ClientCA *x509.CertPool
	// AllowedNames are the common names the front proxy's certificate may carry
	// (--requestheader-allowed-names); empty accepts any certificate ClientCA signed.
	AllowedNames []string
	// UsernameHeaders are the headers holding the user name, first non-empty wins; nil means
	// DefaultUsernameHeader.
	UsernameHeaders []string
	// GroupHeaders are the headers holding the groups, all values of all of them; nil means
	// DefaultGroupHeader.
	GroupHeaders []string
}

// Identity is an apf.IdentitySource: the user in the request context (apf.WithUser) if any,
// else the front-proxy headers of a request whose client certificate was verified, else none.
type Identity struct {
	auth authenticator.Request
}

var _ apf.IdentitySource = (*Identity)(nil)

// New returns an Identity verifying front-proxy certificates against opts.ClientCA.
func New(opts Options) (*Identity, error) {
	if opts.ClientCA == nil {
		return nil, errors.New("requestheader.Options.ClientCA is nil: pass the front proxy's client CA " +
			"(LoadClientCA reads kube-apiserver's --requestheader-client-ca-file); without it no header is believed")
	}
	verify := x509request.DefaultVerifyOptions()
	verify.Roots = opts.ClientCA
	auth := headerrequest.NewDynamicVerifyOptionsSecure(x509request.StaticVerifierFn(verify),
		headerrequest.StaticStringSlice(opts.AllowedNames),
		headerrequest.StaticStringSlice(orDefault(opts.UsernameHeaders, DefaultUsernameHeader)),
		headerrequest.StaticStringSlice(nil),
		headerrequest.StaticStringSlice(orDefault(opts.GroupHeaders, DefaultGroupHeader)),
		headerrequest.StaticStringSlice(nil))
	return &Identity{auth: auth}, nil
}

// LoadClientCA reads a PEM bundle of CA certificates, such as the file of kube-apiserver's
// --requestheader-client-ca-file, for Options.ClientCA.
func LoadClientCA(file string) (*x509.CertPool, error) {
	return cert.NewPool(file)
}

func orDefault(headers []string, def string) []string {
	if len(headers) == 0 {
		return []string{def}
	}
	return headers
}

// Identity implements apf.IdentitySource. The authenticator removes the headers it reads, so it
// reads a copy: the request the server's handlers see is unchanged.
func (i *Identity) Identity(r *http.Request) (string, []string, bool) {
	if name, groups, ok := apf.UserFrom(r.Context()); ok {
		return name, groups, true
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return "", nil, false // no certificate: no header is believed
	}
	shallow := *r
	shallow.Header = r.Header.Clone()
	resp, ok, err := i.auth.AuthenticateRequest(&shallow)
	if err != nil || !ok || resp == nil || resp.User == nil {
		return "", nil, false // unverified certificate, name not allowed, or no user header
	}
	return resp.User.GetName(), resp.User.GetGroups(), true
}
