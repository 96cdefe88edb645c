// Package nativeview answers "which native FlowSchema and priority level does kube-apiserver
// give this request?" from the native flowcontrol.apiserver.k8s.io/v1 objects themselves: the
// cluster's real ones (FromCluster: kube-apiserver's own, whatever its version, objects a
// provider added, and the operator's projection), or kube-apiserver's bootstrap objects as the
// vendored k8s.io/apiserver creates them (Bootstrap, for offline use).
//
// A View orders the FlowSchemas once, as kube-apiserver's configuration controller does
// (schemas whose level is missing are dropped, the mandatory exempt and catch-all objects are
// supplied when absent, then matchingPrecedence and name), and Classify takes the first match,
// reusing internal/native's matcher (native.Matches); there is no second matcher here. The
// answer carries the objects' names and UIDs (what kube-apiserver returns in its
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID headers), the flow
// distinguisher, and the level's nominal seats, computed as kube-apiserver computes them from
// shares: ceil(serverConcurrencyLimit * shares / sum of all levels' shares).
//
// WithProjection replaces the operator-owned objects of a view with the projection of a given
// effective configuration (manifests, a proposed change). Groups completes a request's groups
// the way kube-apiserver's impersonation filter does, which is also what its authenticators give
// a service account's token.
package nativeview
