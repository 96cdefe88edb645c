// Package native projects the effective APF configuration onto kube-apiserver's own flow
// control, the flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration and FlowSchema
// objects, so that the cluster's API servers enforce it. It is pure: Project takes the effective
// configuration and the native objects that exist and returns the native objects that should
// exist plus, for every RequestPriority and FlowSchema, whether it is projected and why not.
// The projection controller applies the objects; the status reconcilers report the results;
// `apf-operator validate --target native` reports the same results offline.
//
// # Exact or not at all
//
// A FlowSchema is projected only when the native rules accept exactly the requests its match
// accepts; otherwise nothing is projected for it (never a broader or narrower rule) and it
// reports Projected=False, reason NotExpressible, with the field path. Per conjunction, the
// tests of each field are reduced to "every value" or a finite set of values:
//   - equals / inSet give a finite set; a pattern gives one when its language is finite
//     ("^(get|list)$", "kube-(system|public)") or every value (".*"); U+FFFD in a pattern
//     (which also matches a byte that is not UTF-8) leaves its language unbounded;
//   - every other test on a field with a finite set (negations included, patterns of any
//     kind) filters that set by evaluating the test on each value, which is exact;
//   - a negation on a field whose domain is finite is applied to the domain: the verbs of
//     resource requests (get, list, watch, create, update, patch, delete, deletecollection,
//     proxy, and "", which kube-apiserver gives OPTIONS, TRACE and custom methods). Only the
//     native "*" accepts "": a set of verbs with "" is expressible only when it holds all ten,
//     and one without "" is listed even when it holds all nine ("notInSet verb [get]" is not
//     expressible; "notInSet verb [get, \"\"]" is);
//   - superSet of one group is a group subject.
//
// The conjunction then becomes one native rule: subjects (users, or one group, or everyone),
// a resource rule (verbs × apiGroups × resource[/subresource] × namespaces / cluster scope)
// and a non-resource rule (verbs × nonResourceURLs). Not expressible, with the reason in the
// message: a test on name; a pattern or negation over an unbounded domain (user names,
// groups, paths, the HTTP methods of non-resource requests); users and a group in one
// conjunction (native subjects are OR-ed); every resource but "" (".+", notEquals "": the native
// "*" also accepts the resource "" of a path with an empty segment, /api/v1//pods, while a
// list names "" like any other resource); superSet of two or more groups, or of the group ""
// (native subjects need a name); a resource constrained without its subresource or the
// reverse (native rules name "pods" and "pods/status" separately: add
// `equals {field: subresource, value: ""}` for the object itself); a namespace that is not a
// DNS label; a literal "*" (a native wildcard); a path equality (a native path also accepts
// everything below it: write `patternMatch {field: path, pattern: "/healthz(/.*)?"}`,
// projected as "/healthz", or "/apis/.*", projected as "/apis/*"); a non-resource verb other
// than get, patch or delete that is not `*`; a flow distinguisher transformation. A pattern's
// "." does not match a newline, while "every value" does: attribute values with a newline are
// treated as absent.
//
// # Budgets
//
// The analysis of one FlowSchema is bounded, so that any object the CRD admits costs little in
// the webhook (which warns with MatchErrors) and in the leader's projection; every size is
// computed from counts and lengths before it is allocated:
//   - a pattern's finite language holds at most 256 values and 64 KiB (maxFiniteValues,
//     maxLanguageBytes); a larger one (x{1000}[a-p][a-p]: 256 values of 1,002 bytes) is not
//     listed. Runs of single-valued parts (the copies of x) are joined before a product is
//     built, so a concatenation builds at most 9 products;
//   - one native FlowSchema lists at most 8,192 values and 256 KiB over all its rules (subjects,
//     verbs, API groups, resource/subresource pairs, namespaces, paths). kube-apiserver refuses
//     bodies over 3 MiB and etcd values over 1.5 MiB; a listed value costs its bytes and at most
//     about 35 bytes of JSON (a user subject), so a native FlowSchema stays under about 540 KiB,
//     a third of etcd's limit, and so does what the plan holds per FlowSchema. resource ×
//     subresource (256 × 256 values of 1 KiB would be 128 MiB) is checked against what is left
//     before it is joined;
//   - the analysis materializes at most 16 MiB (maxAnalysisBytes): pattern parse trees (charged
//     before parsing from the text: a node per byte, 32 KiB per Unicode class escape), their
//     simplified expansion (charged before Simplify) and languages;
//   - evaluating patterns on a field's finite values costs at most 8 Mi instruction-bytes
//     ((program + 8) × (value length + 1) per evaluation, above the steps of Go's regexp
//     engines; about 16 ms);
//   - each distinct pattern is parsed and analyzed once per FlowSchema.
//
// With the allocator's overhead, the analysis of any one FlowSchema allocates well under
// 64 MiB (the adversarial objects of package worstcase: at most about 10 MiB). Past a budget the
// conjunction is NotExpressible with its field path, the sizes and the fix, and the analysis of
// the FlowSchema stops there. Project compiles one FlowSchema at a time: the intermediate sets
// are per conjunction and become garbage; the plan keeps only the bounded native objects.
//
// # Levels
//
// A RequestPriority of level 0 maps onto kube-apiserver's mandatory PriorityLevelConfiguration
// `exempt` (only that name may be of type Exempt): no object is written for it, and FlowSchemas
// that refer to it refer to `exempt`. Any other level becomes a Limited
// PriorityLevelConfiguration: nominalConcurrencyShares = assuredConcurrencyShares,
// lendablePercent (0 when absent), borrowingLimitPercent (budget.DefaultBorrowingLimitPercent
// when absent, lowered to what the borrowing rule leaves, see budget.go), and
// limitResponse Queue{queues: queuesPerWidth, handSize (1 for a single queue),
// queueLengthLimit}. kube-apiserver keeps one queue set per level and counts a request's width
// as seats in it, so the two per-width queue sets of the in-process filter become one set of
// queuesPerWidth queues. A hand that kube-apiserver's shuffle sharder rejects
// (ceil(log2(queues) × handSize) > 60) is not expressible.
//
// A bound level (spec.nativeLevel, bound.go) writes nothing: FlowSchemas that refer to it refer
// to the named existing level, which must be one of the cluster's own (never the operator's,
// "exempt" only with Existing.MayBindExempt); otherwise it and its FlowSchemas are not projected,
// never onto a substitute. It takes nothing from the share budget. Every projected level's
// message names the fields kube-apiserver reads differently from the in-process engine
// (differences.go).
//
// Levels are admitted in the budget's order (budget_order.go: levels already projected, then
// creation time, then name) while their shares fit the share budget of package budget (the
// native levels the operator does not own keep 90% of their share of the server by default,
// Existing.MaxSeatLossPercent) and their borrowing fits its borrowing rule (the operator's
// levels borrow at most that percentage of what those levels lend); a level past it reports
// OverBudget on spec.assuredConcurrencyShares or spec.borrowingLimitPercent and is not
// written. A level that carves its shares from a donor (spec.sharesFrom, carve.go) is checked
// against its donor instead of the share budget.
//
// # Order
//
// FlowSchemas in effect are ordered by (matchingPriority, name) and get distinct matching
// precedences in [FirstPrecedence, MaxPrecedence-1]: after every schema of the cluster's own
// (cluster.go: any native FlowSchema without the operator's label, as read from the cluster,
// never a vendored list) before TailPrecedence — kube-apiserver's schemas that protect the
// control plane (probes, leader election, nodes, controller manager, scheduler, kube-system
// service accounts: 2 to 900 on every version from 1.29; 1.29 to 1.33 also endpoint-controller
// at 150 and workload-leader-election at 200), a managed provider's (EKS: eks-exempt at 2,
// eks-workload-high at 1000) and an administrator's — and before kube-apiserver's tail,
// service-accounts (9000), global-default (9900) and catch-all (10000). FirstPrecedence is
// MinPrecedence, or two past the last of those schemas when one reaches MinPrecedence-1 (the
// operator's route takes the precedence in between). What no projected FlowSchema matches (the
// requests the effective configuration sends to its backstop non-top-backstop) is left to those
// three by default (Existing.Unmatched = UnmatchedKubeAPIServer, the manager's
// --native-unmatched=kube-apiserver): kube-apiserver classifies it exactly as without the
// operator, and the backstop FlowSchema is not projected. With UnmatchedOperator the backstop
// is projected at MaxPrecedence and matches every request, so those three are never reached.
// A backstop level (the implicit workload-low) is projected only while a projected FlowSchema
// refers to it: a level no request is sent to would only take nominal seats from
// kube-apiserver's own levels.
// Precedences already assigned are kept while they still fit the order and the operator's field
// manager owns them (a hand edit is undone), so adding one FlowSchema rewrites only that one. The backstop for system:masters is not projected: it is
// mirrored by kube-apiserver's mandatory `exempt` FlowSchema (precedence 1), which takes every
// request of system:masters first.
//
// # Names and ownership
//
// The native object of RequestPriority or FlowSchema X is named "apf-X"; when that is longer
// than 253 characters it is cut and ends with "-" and 16 hex digits of the SHA-256 of the whole.
// Should two objects in effect still map to one native name, the first by name keeps it and
// the other reports NameConflict naming it. Backstops are "apf.<name>", a form no API object's
// projection takes. Every native object the operator writes carries the label
// app.kubernetes.io/managed-by=apf-operator and the annotation
// flowcontrol.apf-operator.io/source=<Kind>/<name>; only such objects are ever updated or
// deleted. An existing native object with the projected name and without the label is left
// alone and its source reports NameConflict.
//
// One owned native FlowSchema has no API object: the operator's own route, apf.operator
// (operator_route.go), which takes every request of the operator's service account at
// precedence FirstPrecedence-1 onto a level kube-apiserver already has; its source is
// "Operator/<namespace>/<name>".
package native
