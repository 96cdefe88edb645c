// Command aggregated runs the sample aggregated API server: demo.apf-operator.io/v1alpha1
// widgets behind apf-operator's API Priority and Fairness filter, configured by the cluster's
// RequestPriority and FlowSchema objects. See README.md.
//
//	go run . --kubeconfig ~/.kube/config --listen 127.0.0.1:8443 --concurrency-limit 4 --list-delay 200ms
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"

	"example.com/aggregated/server"
)

func main() {
	opts, err := parseFlags(os.Args[1:])
	if err == nil {
		var s *server.Server
		if s, err = server.New(opts); err == nil {
			err = s.Run(genericapiserver.SetupSignalContext())
		}
	}
	if err != nil {
		klog.ErrorS(err, "The sample aggregated API server failed")
		os.Exit(1)
	}
}

// parseFlags turns the command line into server options.
func parseFlags(args []string) (*server.Options, error) {
	fs := flag.NewFlagSet("aggregated", flag.ContinueOnError)
	opts := &server.Options{}
	listen := fs.String("listen", "0.0.0.0:8443", "address (host:port) to serve HTTPS on")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (empty: in-cluster)")
	fs.StringVar(&opts.ServingCertFile, "tls-cert-file", "", "serving certificate (PEM); empty: self-signed")
	fs.StringVar(&opts.ServingKeyFile, "tls-private-key-file", "", "serving key (PEM)")
	fs.StringVar(&opts.CertDir, "cert-dir", "", "directory for the self-signed certificate (empty: temporary)")
	fs.IntVar(&opts.ConcurrencyLimit, "concurrency-limit", 20, "flow control's server concurrency limit, in seats")
	fs.DurationVar(&opts.ListDelay, "list-delay", 0, "time every list of widgets takes")
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(*listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w: write host:port, e.g. 0.0.0.0:8443", *listen, err)
	}
	if opts.BindPort, err = strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("--listen %q: the port is not a number: write host:port, e.g. 0.0.0.0:8443", *listen)
	}
	if opts.BindAddress = net.ParseIP(host); host != "" && opts.BindAddress == nil {
		return nil, fmt.Errorf("--listen %q: the host is not an IP address: write e.g. 0.0.0.0:8443", *listen)
	}
	return opts, nil
}
