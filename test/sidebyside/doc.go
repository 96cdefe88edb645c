// Package sidebyside checks, in one process and one run, that the drop-in filter
// (pkg/apf/apiserverfilter.WithPriorityAndFairness over an apf.Filter) and kube-apiserver's own
// filter (k8s.io/apiserver/pkg/server/filters.WithPriorityAndFairness over
// k8s.io/apiserver/pkg/util/flowcontrol) classify the same requests to the same FlowSchema and
// level when given equivalent configuration: our RequestPriority and FlowSchema objects for the
// drop-in, their projection by internal/native (plus kube-apiserver's mandatory and suggested
// objects) for upstream, made with --native-unmatched=operator (the backstop projected, so that
// the requests no FlowSchema matches are the projection's too). Where the two differ by design (kube-apiserver's suggested
// FlowSchemas take control-plane traffic first; upstream does not classify long-running
// requests other than watches), the differences are pinned request by request.
//
// It is a module of its own because upstream's HTTP filter pulls in dependencies (the etcd
// client, through the server package) that the operator's module does not need; it still
// imports the operator's internal packages, which Go allows to any package under the module's
// import path. `make test` runs it.
package sidebyside
