// Package importer implements `apf-operator import`: it reads kube-apiserver's native flow
// control configuration — flowcontrol.apiserver.k8s.io PriorityLevelConfiguration and
// FlowSchema objects, from manifests or the live cluster — and prints, as YAML on standard
// output, RequestPriority and FlowSchema manifests (flowcontrol.apf-operator.io/v1alpha1) that
// classify every request as kube-apiserver does, so that a cluster's existing configuration can
// move under the operator.
//
// Usage:
//
//	apf-operator import -f PATH [-f PATH]... [--include-bootstrap] [-o FORMAT]
//	apf-operator import --from-cluster [--kubeconfig PATH] [--context NAME] [--include-bootstrap] [-o FORMAT]
//
// Without -o the output is commented YAML documents; -o takes kubectl's printers (yaml, json,
// name, jsonpath=..., go-template=...) applied to one v1 List of the objects.
//
// A PATH is a file, a directory (recursively) or `-` for standard input, read as `validate`
// reads manifests; documents may be objects or lists (`kubectl get flowschemas -o yaml`).
// Versions v1, v1beta3, v1beta2 and v1beta1 are read, each decoded strictly at its own version
// and converted as kube-apiserver converts it (convert.go; docs/import.md); other versions are
// errors, and documents of other API groups are skipped. The cluster is read at v1.
//
// A FlowSchema's reference to a level the inputs do not define becomes a RequestPriority bound
// to it (spec.nativeLevel), when the level exists: in the cluster with --from-cluster, else in
// kube-apiserver's bootstrap set of --kubernetes-version (package bootstrapset). kube-apiserver's
// own levels among the inputs (suggested ones and catch-all) are bound too, never copied. A
// reference to a level that exists nowhere known is imported as it is and reported as not
// enforced (exit code 3).
//
// # What is imported
//
//   - Never: kube-apiserver's mandatory objects `exempt` and `catch-all`, and the objects the
//     operator projected itself (label app.kubernetes.io/managed-by=apf-operator): those come
//     from the operator's own RequestPriority and FlowSchema objects, which `kubectl get rp,fs`
//     exports. A FlowSchema that refers to the operator's level refers to its source
//     RequestPriority (annotation flowcontrol.apf-operator.io/source) instead.
//   - Only with --include-bootstrap: kube-apiserver's suggested objects, recognised by their
//     name (PriorityLevelConfigurations system, node-high, leader-election, workload-high,
//     workload-low, global-default; FlowSchemas probes, system-leader-election,
//     workload-leader-election, endpoint-controller, system-node-high, system-nodes,
//     kube-controller-manager, kube-scheduler, kube-system-service-accounts, service-accounts,
//     global-default) and the annotation apf.kubernetes.io/autoupdate-spec being present. A
//     suggested level that an imported FlowSchema refers to is bound (see above).
//   - Everything else.
//
// # Levels
//
// A FlowSchema referring to `exempt` refers to a RequestPriority `exempt` at level 0, printed
// when some imported FlowSchema refers to it (level 0 takes none of the exempt
// PriorityLevelConfiguration's fields: it has no seats to lend). Each Limited level becomes a
// RequestPriority with assuredConcurrencyShares = nominalConcurrencyShares (absent: 30, the v1
// default), lendablePercent (absent: an explicit 0, its native meaning) and borrowingLimitPercent
// copied, queuesPerWidth = queues,
// handSize (omitted for one queue) and queueLengthLimit (v1 defaults 64, 8 and 50 for 0).
//
// Native levels have no order: they are peers that share the server's concurrency by their
// nominal shares, whereas a RequestPriority's priorityLevel also orders dispatching and names
// the logically lowest level, where unmatched requests go. The levels get priorityLevel 1000,
// 2000, ... in the order in which they are first referred to by the FlowSchemas in native
// matching order (matchingPrecedence, then name), so a level whose schemas match first is the
// logically higher one; levels no FlowSchema refers to follow, by name.
//
// A level with limitResponse Reject cannot be imported: a RequestPriority always queues (one
// queue of one request at least). It is reported on standard error, not printed, and neither
// are the FlowSchemas that refer to it; the rest is printed and the exit code is 1. So is any
// object whose import breaks a RequestPriority or FlowSchema rule (for example more than
// 4096 queues, or more than 64 conjunctions).
//
// # FlowSchemas
//
// matchingPriority = matchingPrecedence × 1000 (the order is kept, ties are broken by name
// on both sides, and there is room in between), requestPriority names the level, and the
// distinguisher ByUser becomes source user, ByNamespace source namespace; a distinguisher
// is dropped for the exempt level and for a single queue, where it has no effect. Each rule
// (subjects × resource and non-resource rules) becomes conjunctions, one per subject term and
// per resource group or URL, with these tests:
//
//   - users: inSet user (with the user names of named service accounts,
//     system:serviceaccount:<namespace>:<name>); each group: superSet of that one group (one
//     conjunction per group: superSet of several means all of them); a service account with
//     name "*": patternMatch user "system:serviceaccount:<namespace>:.*" (kube-apiserver
//     accepts any user name with that prefix); user or group "*": no test.
//   - resource rules: inSet verb and inSet apiGroup unless "*"; resources "*": patternMatch
//     resource ".*"; otherwise "res/sub" entries are split, and resources with the same set of
//     subresources ("" for the object itself) share one conjunction with inSet resource and
//     inSet subresource, whose cross product is exactly the listed entries; namespaces: inSet
//     namespace, with "" when clusterScope; "*": no test when clusterScope, else notEquals
//     namespace "". Every such conjunction has a positive test on resource, so it accepts
//     resource requests only.
//   - non-resource rules: inSet verb unless "*", and one conjunction per URL with patternMatch
//     path: "*" → ".*", "/x/*" → "/x/.*", "/x" → "/x(/.*)?" (a native "/x" also accepts
//     everything below it).
//
// Literals are quoted with regexp.QuoteMeta. A pattern's "." does not match a newline while a
// native wildcard does: values with a newline, which no Kubernetes name has, are the one
// difference (as in package internal/native).
//
// A source namespace requires conjunctions that accept resource requests only. A ByNamespace
// FlowSchema with non-resource rules (kube-apiserver gives those requests the namespace "")
// is split: FlowSchema <name> keeps the resource conjunctions and the distinguisher, and
// <name>-nonresource, at the same matchingPriority and with no distinguisher, the
// non-resource ones. Classification is unchanged (no other imported FlowSchema of that
// precedence may sort between the two names, or the schema is not imported); the only
// difference is that the non-resource requests form their own flow instead of sharing the
// flow "" with cluster-scoped requests. The split is noted on standard error.
//
// kube-apiserver's mandatory `exempt` FlowSchema takes every request of system:masters
// first. It is not imported: the operator's effective configuration does the same (an
// implicit schema sends every member of system:masters to level 0, ahead of every
// FlowSchema), and a natively projected configuration keeps kube-apiserver's own `exempt`
// ahead of everything, so nothing changes on either side.
//
// The output starts with a comment line; each object is preceded by a comment naming the
// native object it came from, and carries its labels and annotations (but those describing
// the native object itself: notes name them). Notes and problems go to standard error, with a
// summary that counts what will not be enforced. The exit code is 0 when everything selected
// was imported exactly, 1 when something could not be (or an input could not be read: nothing
// is printed then), 2 for a usage error, 3 when everything was imported but some FlowSchema
// refers to a level that exists nowhere known.
package importer
