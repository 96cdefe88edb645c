// Package validation holds the validation rules of RequestPriority, FlowSchema and
// EventRateLimit objects (EventRateLimitSpec: seed 001's rules, stateless),
// written once as pure functions that return a field.ErrorList (paths and fixes) and warnings.
// The admission webhooks (package webhooks), the offline `apf-operator validate` command and the
// reconcilers' status all call them, so admission, CI and status never disagree.
//
// The rules come in three layers:
//
//   - Stateless checks of one spec (RequestPrioritySpec, FlowSchemaSpec): ranges, required and
//     forbidden fields, the shuffle-sharding hand-size limit (computed by the engine's own
//     shufflesharding.ValidateHandSize), regular expressions, atomic tests. The CRD carries the
//     same rules as OpenAPI bounds and CEL so they hold while the webhook is down; the Go
//     messages are more precise (they name the offending value and the computed figures).
//     The patterns of one FlowSchema share a regex budget (regexbudget.go: pattern text, Unicode
//     class escapes, compiled instructions), checked before parsing and compiling, so that
//     validating any admitted FlowSchema takes milliseconds.
//   - Checks of a pair of objects (FlowSchemaAgainstPriority, RequestPriorityUpdate).
//   - Checks against the other stored objects (RequestPriority, FlowSchema with an Objects
//     view): unique priority level, references, and the reverse distinguisher check.
//
// Authorization for the exempt level (ExemptAccess) is separate because it depends on who
// sends the request, which only the webhook knows; so is ExemptReferrers (no level 0 under a
// name that FlowSchemas of unchecked authors already refer to), which depends on the order in
// which objects reach the cluster.
//
// What proves that a conjunction accepts only resource requests (ResourceOnly) follows DESIGN.md
// decision 4: the attributes apiGroup, resource, subresource, namespace and name are absent for
// a non-resource request, and a positive test of an absent attribute is false.
package validation
