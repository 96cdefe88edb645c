package controllers

import (
	"context"
	"sort"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// TestAutopilotReplicaAddresses: the autopilot reads every ready endpoint of the kubernetes
// Service (not another Service's, not a terminating one), with the operator's credentials
// and TLS still verifying the host it normally reaches.
func TestAutopilotReplicaAddresses(t *testing.T) {
	slice := func(name, service string, port int32, ready bool, addrs ...string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Labels: map[string]string{discoveryv1.LabelServiceName: service}}, AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}}}
	}
	c := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(
		slice("kubernetes", "kubernetes", 6443, true, "10.0.0.1", "10.0.0.2"),
		slice("kubernetes-old", "kubernetes", 6443, false, "10.0.0.9"),
		slice("other", "web", 8443, true, "10.0.0.3")).Build()
	src := newReplicaSource(&rest.Config{Host: "https://10.96.0.1:443", BearerToken: "t"}, c)
	getters, err := src.replicaGetters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for addr := range getters {
		got = append(got, addr)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "10.0.0.1:6443 10.0.0.2:6443" {
		t.Errorf("replicas %v, want 10.0.0.1:6443 and 10.0.0.2:6443", got)
	}
	cfg := replicaConfig(src.cfg, "10.0.0.2:6443")
	if cfg.Host != "https://10.0.0.2:6443" || cfg.ServerName != "10.96.0.1" || cfg.BearerToken != "t" {
		t.Errorf("replica config host %q server name %q token %q", cfg.Host, cfg.ServerName, cfg.BearerToken)
	}
	if src.cfg.Host != "https://10.96.0.1:443" {
		t.Errorf("the operator's own config changed: %q", src.cfg.Host)
	}
}

// TestAutopilotUnprojectedMemberLeftOut: ghost has spec.autopilot but kube-apiserver has no
// level for it (not projected): it is left out with the reason in its status, keeps its
// configured shares, and grow and give go on: the loop steps between them.
func TestAutopilotUnprojectedMemberLeftOut(t *testing.T) {
	h := newAutopilotHarness(t, pooledRP("grow", 100, 10, 5, 40), pooledRP("give", 200, 30, 5, 40),
		pooledRP("ghost", 300, 20, 5, 40))
	h.api.demand[native.NativeName("grow")] = 11.9
	h.api.demand[native.NativeName("give")] = 5.7 // ghost: no series at all
	h.tick(true)
	h.tick(false)
	h.tick(false)
	g, ghost := h.status("grow"), h.status("ghost")
	if g.State != flowv1.AutopilotApplied || *g.AppliedShares <= 10 {
		t.Errorf("grow: %+v, want Applied above 10 (the rest of the pool goes on)", g)
	}
	if ghost.State != flowv1.AutopilotWaiting || *ghost.AppliedShares != 20 || !strings.Contains(ghost.Message, "not projected") {
		t.Errorf("ghost: %+v, want Waiting at its 20 shares with a reason", ghost)
	}
}

// TestAutopilotUnreachableReplicasFallBack: a replica the operator cannot reach (envtest
// advertises 192.0.2.2) makes the read fall back to the Service, instead of leaving every
// window incomplete.
func TestAutopilotUnreachableReplicasFallBack(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To[int32](1)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}}}).Build()
	src := newReplicaSource(&rest.Config{Host: "https://127.0.0.1:1"}, c)
	snap, ok, err := src.read(context.Background(), autopilotStart)
	if ok || snap != nil || err != nil {
		t.Fatalf("read of an unreachable replica: %v %v %v, want a fall back to the Service", snap, ok, err)
	}
}
