// Package bootstrapset is kube-apiserver's bootstrap configuration of API Priority and
// Fairness: its mandatory and suggested FlowSchemas and PriorityLevelConfigurations, as the
// vendored k8s.io/apiserver (pkg/apis/flowcontrol/bootstrap) creates them. It is the one place
// that reads that package; every other package takes the set from here, through
// nativeview.Bootstrap and nativeview.BootstrapObjects where it can.
//
// It is nativeview's data, kept in a leaf package so that internal/native and its share budget,
// which nativeview itself imports, can use it without an import cycle. Only the vendored
// version is known: a cluster of another version may hold other objects, which is why a
// cluster's own objects (nativeview.FromCluster) are the truth and this set the offline stand-in.
package bootstrapset

import (
	"runtime/debug"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

// FlowSchemas returns the mandatory and suggested FlowSchemas (deep copies), mandatory first.
func FlowSchemas() []flowcontrolv1.FlowSchema {
	return copySchemas(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas)
}

// PriorityLevels returns the mandatory and suggested priority levels (deep copies), mandatory
// first.
func PriorityLevels() []flowcontrolv1.PriorityLevelConfiguration {
	return copyLevels(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations)
}

// MandatoryFlowSchemas returns the FlowSchemas kube-apiserver always keeps, exempt and
// catch-all (deep copies).
func MandatoryFlowSchemas() []flowcontrolv1.FlowSchema {
	return copySchemas(bootstrap.MandatoryFlowSchemas)
}

// MandatoryPriorityLevels returns the priority levels kube-apiserver always keeps, exempt and
// catch-all (deep copies).
func MandatoryPriorityLevels() []flowcontrolv1.PriorityLevelConfiguration {
	return copyLevels(bootstrap.MandatoryPriorityLevelConfigurations)
}

// CatchAll returns the mandatory catch-all FlowSchema (a deep copy), kube-apiserver's fallback
// for a request no FlowSchema matches.
func CatchAll() *flowcontrolv1.FlowSchema {
	return bootstrap.MandatoryFlowSchemaCatchAll.DeepCopy()
}

// Version is the version of k8s.io/apiserver this binary was built with: the version whose
// bootstrap objects these are.
func Version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "k8s.io/apiserver" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

func copySchemas(lists ...[]*flowcontrolv1.FlowSchema) []flowcontrolv1.FlowSchema {
	var out []flowcontrolv1.FlowSchema
	for _, list := range lists {
		for _, fs := range list {
			out = append(out, *fs.DeepCopy())
		}
	}
	return out
}

func copyLevels(lists ...[]*flowcontrolv1.PriorityLevelConfiguration) []flowcontrolv1.PriorityLevelConfiguration {
	var out []flowcontrolv1.PriorityLevelConfiguration
	for _, list := range lists {
		for _, l := range list {
			out = append(out, *l.DeepCopy())
		}
	}
	return out
}
