// Package skew_test runs the operator against every kube-apiserver version the project
// supports (docs/compatibility.md): at least the oldest (1.29) and the newest (1.36), each built
// from its Go modules by hack/build-envtest.sh. Per version it starts a real control plane
// (test/harness), creates FlowSchemas as a managed provider does (EKS's eks-exempt at 2 and
// eks-workload-high at 1000) before the operator starts, runs the operator binary with its
// defaults and enforcement native, adds a tenant configuration, and checks against the server:
// everything is Projected=True except the default FlowSchemas native enforcement withholds
// (defaults.Withheld: Projected=False, reason ShadowedByNative), every schema of the cluster's own before the tail (read from
// the server, with whatever precedence that version gives it) is still ahead of the projection,
// and kube-apiserver classifies requests (X-Kubernetes-PF-FlowSchema-UID and -PriorityLevel-UID)
// as that version's own configuration, the provider's and the tenant's say.
//
// The versions are the directories in APF_SKEW_ASSETS (space-separated; `make test` passes the
// oldest and the newest), else every bin/k8s/<version>-<os>-<arch>. The suite fails, never
// skips, when the oldest supported version is not among them.
package skew_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/test/harness"
)

// operatorBinary is the operator binary, the same for every version.
var operatorBinary string

func TestMain(m *testing.M) {
	harness.Main(m, &harness.Suite{Name: "skew", NeedsBinary: true, Ready: func(s *harness.Suite) error {
		operatorBinary = s.Binary
		return nil
	}})
}
