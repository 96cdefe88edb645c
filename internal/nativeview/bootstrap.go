package nativeview

import (
	"fmt"

	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// DefaultServerSeats is kube-apiserver's concurrency limit with its default flags
// (--max-requests-inflight 400 + --max-mutating-requests-inflight 200), assumed offline.
const DefaultServerSeats = 600

// Bootstrap returns the view of kube-apiserver's mandatory and suggested objects as the
// vendored k8s.io/apiserver creates them, with the default concurrency limit: what a cluster
// of that version holds unless someone changed it. It is for offline use; a cluster's own
// objects (FromCluster) are the truth.
func Bootstrap() *View {
	objs := BootstrapObjects()
	origin := fmt.Sprintf("offline: kube-apiserver's bootstrap objects of k8s.io/apiserver %s and its default "+
		"concurrency limit (%d seats), not read from a cluster", bootstrapset.Version(), DefaultServerSeats)
	return New(origin, objs.FlowSchemas, objs.PriorityLevels, DefaultServerSeats)
}

// BootstrapObjects returns kube-apiserver's mandatory and suggested objects as the vendored
// k8s.io/apiserver creates them (deep copies, mandatory first).
func BootstrapObjects() Objects {
	return Objects{FlowSchemas: bootstrapset.FlowSchemas(), PriorityLevels: bootstrapset.PriorityLevels()}
}

// BootstrapForVersion returns the view of kube-apiserver's mandatory and suggested objects of
// a Kubernetes minor version (bootstrapset.ForVersion: "1.29" to the newest known), with the
// default concurrency limit. Like Bootstrap, it is for offline use.
func BootstrapForVersion(version string) (*View, error) {
	set, err := bootstrapset.ForVersion(version)
	if err != nil {
		return nil, err
	}
	origin := fmt.Sprintf("offline: kube-apiserver %s's bootstrap objects (%s) and its default concurrency limit "+
		"(%d seats), not read from a cluster", set.KubernetesVersion, set.Module, DefaultServerSeats)
	return New(origin, set.FlowSchemas(), set.PriorityLevels(), DefaultServerSeats), nil
}
