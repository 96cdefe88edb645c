package nativeview

import (
	"fmt"
	"runtime/debug"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

// DefaultServerSeats is kube-apiserver's concurrency limit with its default flags
// (--max-requests-inflight 400 + --max-mutating-requests-inflight 200), assumed offline.
const DefaultServerSeats = 600

// Bootstrap returns the view of kube-apiserver's mandatory and suggested objects as the
// vendored k8s.io/apiserver creates them, with the default concurrency limit: what a cluster
// of that version holds unless someone changed it. It is for offline use; a cluster's own
// objects (FromCluster) are the truth.
func Bootstrap() *View {
	var schemas []flowcontrolv1.FlowSchema
	for _, list := range [][]*flowcontrolv1.FlowSchema{bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas} {
		for _, fs := range list {
			schemas = append(schemas, *fs)
		}
	}
	var levels []flowcontrolv1.PriorityLevelConfiguration
	for _, list := range [][]*flowcontrolv1.PriorityLevelConfiguration{
		bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations} {
		for _, l := range list {
			levels = append(levels, *l)
		}
	}
	origin := fmt.Sprintf("offline: kube-apiserver's bootstrap objects of k8s.io/apiserver %s and its default "+
		"concurrency limit (%d seats), not read from a cluster", apiserverVersion(), DefaultServerSeats)
	return New(origin, schemas, levels, DefaultServerSeats)
}

// apiserverVersion is the version of k8s.io/apiserver this binary was built with.
func apiserverVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "k8s.io/apiserver" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}
