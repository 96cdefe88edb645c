package top

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestGetSendsTheQueryAsParameters: the dump's query must reach the server as a query, not
// escaped into the path (which kube-apiserver answers with 404).
func TestGetSendsTheQueryAsParameters(t *testing.T) {
	var gotPath, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery = r.URL.Path, r.URL.RawQuery
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	src, err := newClusterSource(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.get(context.Background(), "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1"); err != nil {
		t.Fatal(err)
	}
	if gotPath != "/debug/api_priority_and_fairness/dump_requests" || gotQuery != "includeRequestDetails=1" {
		t.Errorf("GET path %q query %q", gotPath, gotQuery)
	}
}

func TestOwnersAndReplicas(t *testing.T) {
	owned := metav1.ObjectMeta{Name: "apf-tenant", Labels: map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}}
	plc := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: *owned.DeepCopy()}
	plc.Annotations = map[string]string{flowv1.AnnotationSource: "RequestPriority/tenant"}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: *owned.DeepCopy()}
	fs.Annotations = map[string]string{flowv1.AnnotationSource: "FlowSchema/tenant"}
	// Same annotation without the managed-by label: not ours.
	foreign := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "global-default",
		Annotations: map[string]string{flowv1.AnnotationSource: "FlowSchema/x"}}}
	lease := func(name string, identity bool) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}}
		if identity {
			l.Labels = map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}
		}
		return l
	}
	src := &clusterSource{client: fake.NewClientset(plc, fs, foreign,
		lease("apiserver-a", true), lease("apiserver-b", true), lease("kube-scheduler", false))}
	owners, err := src.owners(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if owners.Levels["apf-tenant"] != "RequestPriority/tenant" || owners.Schemas["apf-tenant"] != "FlowSchema/tenant" ||
		owners.Schemas["global-default"] != "" {
		t.Errorf("owners = %+v", owners)
	}
	if n, err := src.replicas(context.Background()); err != nil || n != 2 {
		t.Errorf("replicas = %d, %v; want the 2 identity leases", n, err)
	}
	// No identity leases: the endpoints of the kubernetes Service's slices.
	slice := func(name string, ips ...string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}}}
		for _, ip := range ips {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
		}
		return s
	}
	other := slice("other", "10.9.9.9")
	other.Labels[discoveryv1.LabelServiceName] = "other"
	src = &clusterSource{client: fake.NewClientset(slice("kubernetes", "10.0.0.1", "10.0.0.2"), slice("kubernetes-v6", "fd00::3"), other)}
	if n, err := src.replicas(context.Background()); err != nil || n != 3 {
		t.Errorf("replicas = %d, %v; want the 3 endpoints of Service kubernetes", n, err)
	}
	if _, err := (&clusterSource{client: fake.NewClientset()}).replicas(context.Background()); err == nil {
		t.Error("no leases and no endpoints: want an error (replicas unknown)")
	}
}
