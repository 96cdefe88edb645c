package nativeview

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// TestFromCluster checks that the cluster's own objects (here: the bootstrap ones with UIDs,
// global-default changed to 50 shares as an administrator might) are what the view classifies
// with, UIDs included, and that seats are unknown, with the reason, when /metrics cannot be read.
func TestFromCluster(t *testing.T) {
	var objs []runtime.Object
	boot := BootstrapObjects()
	for _, fs := range boot.FlowSchemas {
		fs.UID = types.UID("fs-" + fs.Name)
		objs = append(objs, &fs)
	}
	for _, l := range boot.PriorityLevels {
		l.UID = types.UID("pl-" + l.Name)
		if l.Name == "global-default" {
			shares := int32(50)
			l.Spec.Limited.NominalConcurrencyShares = &shares
		}
		objs = append(objs, &l)
	}
	v, err := FromCluster(context.Background(), fake.NewClientset(objs...))
	if err != nil {
		t.Fatal(err)
	}
	a := &request.Attributes{User: "alice", Groups: Groups("alice", nil), Verb: "list", Resource: "pods", Namespace: "a",
		ResourceRequest: true}
	got := v.Classify(a)
	if got.FlowSchema != (Ref{Name: "global-default", UID: "fs-global-default"}) ||
		got.PriorityLevel != (Ref{Name: "global-default", UID: "pl-global-default"}) {
		t.Errorf("got %+v", got)
	}
	if got.NominalSeats != nil || v.SeatsError == nil || !strings.Contains(v.SeatsError.Error(), "/metrics") {
		t.Errorf("seats %v, error %v; want unknown, saying why", got.NominalSeats, v.SeatsError)
	}
	// The cluster's shares count: 275 in all, so with 600 seats global-default has ceil(600*50/275).
	seats := New(OriginCluster, v.FlowSchemas(), v.PriorityLevels(), 600).NominalSeats("global-default")
	if seats == nil || *seats != 110 {
		t.Errorf("nominal seats %v, want 110", seats)
	}
}
