package apf_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/pkg/apf"
)

// toUnstructured converts a typed object of this operator's API for the fake dynamic client.
func toUnstructured(t *testing.T, obj any, kind string) *unstructured.Unstructured {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind(kind)
	return u
}

// TestInformerSourceAppliesClusterObjects: the source reads the cluster's objects through
// client-go and the Filter classifies by them once HasSynced.
func TestInformerSourceAppliesClusterObjects(t *testing.T) {
	rps, fss := tenantObjects()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{
			v1alpha1.GroupVersion.WithResource("requestpriorities"): "RequestPriorityList",
			v1alpha1.GroupVersion.WithResource("flowschemas"):       "FlowSchemaList",
		},
		toUnstructured(t, &rps[0], "RequestPriority"), toUnstructured(t, &fss[0], "FlowSchema"))
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	src, err := apf.NewInformerSourceForClient(client, f, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	waitFor(t, "the source to sync", src.HasSynced)
	c := f.Explain(apf.Attributes{User: "alice", Groups: []string{"tenants"}, Verb: "list", Resource: "pods",
		Namespace: "team-a", ResourceRequest: true})
	if c.FlowSchema != "tenant-workloads" {
		t.Errorf("after sync: FlowSchema %q; want tenant-workloads", c.FlowSchema)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
