package server

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Options configure the sample server.
type Options struct {
	// Kubeconfig is the kubeconfig file of the cluster: the server asks its kube-apiserver to
	// authenticate and authorize requests, and watches its RequestPriority and FlowSchema
	// objects. Empty means the in-cluster configuration.
	Kubeconfig string
	// Listener, when set, is where the server listens (tests pass one on port 0); otherwise it
	// listens on BindAddress:BindPort.
	Listener net.Listener
	// BindAddress and BindPort are the address to listen on when Listener is nil.
	BindAddress net.IP
	BindPort    int
	// ServingCertFile and ServingKeyFile hold the serving certificate and key (PEM); both empty
	// makes a self-signed certificate for localhost in CertDir.
	ServingCertFile, ServingKeyFile string
	// CertDir receives the self-signed certificate; empty means a temporary directory.
	CertDir string
	// ConcurrencyLimit is the flow-control filter's server concurrency limit, in seats.
	ConcurrencyLimit int
	// ListDelay is how long every list of widgets takes, to overload the server on purpose.
	ListDelay time.Duration
}

// validate names the first bad option and its fix.
func (o *Options) validate() error {
	if o.ConcurrencyLimit < 1 {
		return fmt.Errorf("concurrency limit is %d: set it to at least 1 (--concurrency-limit)", o.ConcurrencyLimit)
	}
	if o.ListDelay < 0 {
		return fmt.Errorf("list delay is %s: set it to 0 or more (--list-delay)", o.ListDelay)
	}
	if (o.ServingCertFile == "") != (o.ServingKeyFile == "") {
		return errors.New("only one of the serving certificate and key is set: set both " +
			"(--tls-cert-file and --tls-private-key-file) or neither for a self-signed certificate")
	}
	if o.Listener == nil && (o.BindPort < 1 || o.BindPort > 65535) {
		return fmt.Errorf("port %d is out of range: set --listen to host:port with a port from 1 to 65535", o.BindPort)
	}
	return nil
}
