package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
)

// webhookTLSFlags are the webhook server's caller verification settings.
type webhookTLSFlags struct {
	clientCAFile string
	// clientCAs is the bundle read from clientCAFile by check; nil when it is empty.
	clientCAs *x509.CertPool
}

func (w *webhookTLSFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&w.clientCAFile, "webhook-client-ca-file", "",
		"PEM bundle of the CAs whose client certificates may call the webhook server; when set, a caller without such a certificate fails the TLS handshake (give kube-apiserver the certificate through its admission kubeconfig). Read at start: restart after changing it. Empty: any caller that reaches the port is served.")
}

// check reads and parses the client CA bundle, so that a wrong path or file stops the manager
// at start with the flag's name instead of failing every handshake later.
func (w *webhookTLSFlags) check() error {
	if w.clientCAFile == "" {
		return nil
	}
	data, err := os.ReadFile(w.clientCAFile)
	if err != nil {
		return fmt.Errorf("--webhook-client-ca-file: %w", err)
	}
	pool, err := parseCABundle(data)
	if err != nil {
		return fmt.Errorf("--webhook-client-ca-file=%q: %w", w.clientCAFile, err)
	}
	w.clientCAs = pool
	return nil
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

// opts returns the webhook server's TLS options: base, then, with a client CA bundle, client
// certificates required and verified against it.
func (w *webhookTLSFlags) opts(base ...func(*tls.Config)) []func(*tls.Config) {
	if w.clientCAs == nil {
		return base
	}
	pool := w.clientCAs
	return append(base, func(c *tls.Config) {
		c.ClientCAs = pool
		c.ClientAuth = tls.RequireAndVerifyClientCert
	})
}
