// Package eventratelimit is the engine of EventRateLimit (seed 001): token buckets on event
// creation, keyed per server, namespace, user and event source+object, that the operator's
// validating webhook on CREATE of events consults. It knows nothing of controller-runtime: the
// webhook hands it Attributes, a reconciler hands it the EventRateLimit objects (Update).
//
// Semantics, as the seed's "Example" section states them:
//
//   - Each limit type of an EventRateLimit has its own buckets (golang.org/x/time/rate
//     limiters): one for Server, one per key for the others. A bucket of size burst starts
//     full and refills at qps tokens per second.
//   - Every bucket a request maps to is charged independently: an event rejected by the
//     server bucket still takes a token from its namespace bucket if that bucket has one, and
//     vice versa. The request is admitted only if every bucket had a token.
//   - The keyed buckets of a type live in an LRU cache of cacheSize entries
//     (hashicorp/golang-lru/v2); a bucket evicted from it is forgotten, and its key starts again
//     with a full bucket. Memory is therefore bounded by cacheSize per type, whatever the number
//     of distinct keys.
//   - Several EventRateLimit objects are each enforced: an event must fit all of them, and each
//     object's buckets are charged whatever the others decide.
//
// A rejection carries the time until the emptiest of the rejecting buckets holds a token
// again, which the webhook returns as Retry-After.
//
// Several webhook replicas each hold their own buckets. SetReplicas divides every object's qps
// and burst by the number of replicas, so that the cluster-wide rate stays the configured one
// while kube-apiserver spreads webhook calls evenly over them.
//
// Only requests attributed to a namespace and a user are charged (Attributes.Unattributed): the
// webhook admits one without either, charges nothing and counts it with Skip (SkipReason), so
// that a caller other than kube-apiserver cannot drain buckets, nor share one keyed "".
//
// Metrics (NewMetrics): apf_operator_event_rate_limit_decisions_total{limit_type, result} counts
// every bucket's verdict; apf_operator_event_rate_limit_events_total{result} counts the
// admission decisions; apf_operator_event_rate_limit_skipped_total{reason} counts the requests
// admitted without charge. Keys are never labels.
package eventratelimit
