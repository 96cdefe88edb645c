// Package nativeview answers "which native FlowSchema and priority level does kube-apiserver
// give this request?" from the native flowcontrol.apiserver.k8s.io/v1 objects themselves: the
// cluster's real ones (FromCluster: kube-apiserver's own, whatever its version, objects a
// provider added, and the operator's projection), or kube-apiserver's bootstrap objects as the
// vendored k8s.io/apiserver creates them (Bootstrap, for offline use).
//
// It is the one place that loads native objects: List and ListPriorityLevels read them from a
// cluster (the CLI's explain, replay, top, recommend and import all call them), and
// BootstrapObjects is kube-apiserver's mandatory and suggested set, whose data lives in the leaf
// package bootstrapset (internal/native's share budget needs it, and nativeview imports
// internal/native). Only the operator's reconcilers, which read the manager's cache, and
// prune-native, which deletes what it lists, list native objects themselves;
// TestOneReaderOfEach fails on any other reader.
//
// A View orders the FlowSchemas once, as kube-apiserver's configuration controller does
// (schemas whose level is missing are dropped, the mandatory exempt and catch-all objects are
// supplied when absent, then matchingPrecedence and name), and Classify takes the first match,
// reusing internal/native's matcher (native.Matches); it is the project's one classifier of
// native objects, and its tests ask kube-apiserver's own controller (internal/native/nativetest).
// The answer carries the objects' names and UIDs (what kube-apiserver returns in its
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID headers), the flow
// distinguisher, and the level's nominal seats: the ones kube-apiserver reports, read by
// internal/apfmetrics (WithMetrics; the operator's status reads them the same way), else computed
// as kube-apiserver computes them from shares: ceil(serverConcurrencyLimit * shares / sum of all
// levels' shares).
//
// WithProjection replaces the operator-owned objects of a view with the projection of a given
// effective configuration (manifests, a proposed change). Groups completes a request's groups
// the way kube-apiserver's impersonation filter does, which is also what its authenticators give
// a service account's token.
package nativeview
