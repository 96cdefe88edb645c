package controllers

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// The autopilot lists the kubernetes Service's EndpointSlices to read every kube-apiserver.
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list

// replicaSource reads the /metrics of every kube-apiserver replica: the ready endpoints of the
// default namespace's kubernetes Service (its EndpointSlices, which kube-apiserver keeps),
// each through a client of the operator's own credentials pointed at the replica's address
// (verifying the serving certificate for the host the operator normally reaches). Each
// replica has its own flow control and counters: one read through the Service is one random
// replica's, and two reads of different replicas are not a window (docs/autopilot-loop.md).
type replicaSource struct {
	cfg    *rest.Config
	slices client.Reader

	mu      sync.Mutex
	getters map[string]apfmetrics.Getter // by address, kept while the replica is listed
	failed  bool                         // a failure to read the replicas was logged
}

func newReplicaSource(cfg *rest.Config, slices client.Reader) *replicaSource {
	return &replicaSource{cfg: cfg, slices: slices, getters: map[string]apfmetrics.Getter{}}
}

// read reads and merges every replica's metrics at now. ok is false, and the caller reads
// through the Service, when the replicas cannot be listed (no permission, no EndpointSlices)
// or one of them cannot be read directly (an address the operator cannot reach: envtest
// advertises 192.0.2.2, some managed control planes are behind a load balancer). The
// snapshot's replica set then changes, so that window is incomplete; the following ones,
// all read through the Service, count as before.
func (s *replicaSource) read(ctx context.Context, now time.Time) (snap *apfmetrics.Snapshot, ok bool, err error) {
	if s == nil {
		return nil, false, nil
	}
	getters, err := s.replicaGetters(ctx)
	if err == nil && len(getters) == 0 {
		err = fmt.Errorf("the kubernetes Service has no ready endpoint")
	}
	if err == nil {
		// Half the read's time at most: an address that swallows packets must leave the
		// Service read time to answer.
		rctx, cancel := context.WithTimeout(ctx, nativeSeatsTimeout/2)
		snap, err = apfmetrics.ReadReplicas(rctx, getters)
		cancel()
	}
	if err != nil {
		s.note(ctx, err)
		return nil, false, nil
	}
	s.mu.Lock()
	s.failed = false
	s.mu.Unlock()
	snap.Time = now
	return snap, true, nil
}

// note logs, once until the next success, why the replicas are not read one by one.
func (s *replicaSource) note(ctx context.Context, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failed {
		logf.FromContext(ctx).Info("Cannot read every kube-apiserver replica; the autopilot reads /metrics through the kubernetes Service (one replica a read)",
			"error", err.Error())
		s.failed = true
	}
}

// replicaGetters returns a Getter for every ready endpoint of the kubernetes Service.
func (s *replicaSource) replicaGetters(ctx context.Context) (map[string]apfmetrics.Getter, error) {
	var list discoveryv1.EndpointSliceList
	if err := s.slices.List(ctx, &list, client.InNamespace("default"),
		client.MatchingLabels{discoveryv1.LabelServiceName: "kubernetes"}); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]apfmetrics.Getter{}
	for _, addr := range endpointAddresses(list.Items) {
		g := s.getters[addr]
		if g == nil {
			var err error
			if g, err = s.getterFor(addr); err != nil {
				return nil, err
			}
		}
		out[addr] = g
	}
	s.getters = out
	return out, nil
}

// endpointAddresses are the host:port of every ready endpoint of the slices (the https port).
func endpointAddresses(slices []discoveryv1.EndpointSlice) []string {
	var out []string
	for _, slice := range slices {
		port := int32(443)
		for _, p := range slice.Ports {
			if p.Port != nil && (p.Name == nil || *p.Name == "https" || len(slice.Ports) == 1) {
				port = *p.Port
			}
		}
		for _, ep := range slice.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				out = append(out, net.JoinHostPort(a, strconv.Itoa(int(port))))
			}
		}
	}
	return out
}

// getterFor is a Getter of the replica at addr, with the operator's credentials.
func (s *replicaSource) getterFor(addr string) (apfmetrics.Getter, error) {
	cfg := replicaConfig(s.cfg, addr)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client for kube-apiserver replica %s: %w", addr, err)
	}
	c := dc.RESTClient()
	return func(ctx context.Context, path string) ([]byte, error) {
		return apfmetrics.Fetch(ctx, c.Get().AbsPath(path).SetHeader("Accept", "text/plain"), path)
	}, nil
}

// replicaConfig is cfg pointed at the replica at addr; TLS still verifies the serving
// certificate for cfg's own host (the Service's address or name, which every replica's
// certificate covers), unless cfg names a server already.
func replicaConfig(cfg *rest.Config, addr string) *rest.Config {
	out := rest.CopyConfig(cfg)
	if out.ServerName == "" {
		if u, err := url.Parse(cfg.Host); err == nil && u.Hostname() != "" {
			out.ServerName = u.Hostname()
		}
	}
	out.Host = "https://" + addr
	return out
}
