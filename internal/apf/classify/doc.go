// Package classify assigns a request to its FlowSchema, flow distinguisher and width, as the API
// Priority and Fairness proposal describes in "Request Categorization" and "Default Behavior",
// with the decisions of DESIGN.md ("API", decision 4, "Semantics").
//
// Compile turns an effective configuration into a Classifier once per configuration change:
// every pattern is compiled once (RE2, anchored to match the whole value) and every
// conjunction is filed in an index. A request whose groups include system:masters goes to the
// masters backstop (the exempt level) ahead of every FlowSchema, so no configuration can lock
// administrators out. For any other request, Classify finds the best matching FlowSchema: the
// one with the numerically lowest matchingPriority, ties broken by name (the order of
// effective.Config.Schemas), and within it the first conjunction that accepts the request; a
// request no FlowSchema matches goes to the catch-all backstop.
//
// # Index
//
// Conjunctions are numbered in schema order (schema, then conjunction), so the best match is
// the accepting conjunction with the lowest number. Each conjunction is filed under one
// positive equality test it contains, preferring the most selective field: equals or inSet on
// user, name, namespace, path, resource, subresource, apiGroup or verb, or superSet on groups
// (filed under one of the listed groups). A conjunction with no such test (only patterns,
// negations, or no test at all) goes to an always-checked list. Classify looks up the request's
// value of each indexed field (and each of its groups): in an open-addressing hash table
// built with the configuration, or, for a field with at most 8 indexed values (verb or groups
// in most configurations), by comparing strings.
// Each resulting list, and then the always-checked one, is ascending; Classify scans each only
// below the best accepting number found so far, stopping at its first acceptance, which yields
// the lowest accepting number overall. A candidate found under a value is not re-tested on
// that value: the lookup proved the test it was filed by (for a superSet, only when the group
// is its only member). The cost therefore depends on the number of candidates, not on the
// number of FlowSchemas, for configurations that test user, groups, verb, resource or
// namespace by equality or set membership; pattern-only conjunctions are scanned.
//
// Patterns of the common forms ".*", "literal", "prefix.*" and ".*suffix" are matched with
// string comparisons that give exactly the regular expression's answer; others run RE2.
//
// # Absent attributes
//
// A non-resource request has no apiGroup, resource, subresource, namespace or name; a resource
// request has no path. A positive test (equals, inSet, superSet, patternMatch) of an absent
// attribute is false and its negation is true.
//
// # Distinguisher, width, long-running
//
// The flow distinguisher is the user name or the namespace (absent: ""), optionally transformed
// by a regular expression: a complete match yields submatch 1, anything else "". Width is 1 for
// get, list and watch, 2 otherwise. Watch, proxy, exec, attach, port-forward and followed log
// requests are flagged long-running: the filter does not flow-control them.
//
// Classify allocates nothing, except to transform a distinguisher value it has not seen
// recently (a small cache per transformation remembers recent values).
package classify
