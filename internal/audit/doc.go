// Package audit reads the requests kube-apiserver served from its audit log (audit.k8s.io/v1
// Event objects, one JSON object per line, as --audit-log-path writes them; gzip-compressed
// files too) or from a recorded request list (RecordedRequest lines, this project's own
// format), and turns each into the attributes flow control classifies
// (internal/apf/request.Attributes) with its start and end time.
//
// An audit log holds up to four events per request (stages RequestReceived, ResponseStarted,
// ResponseComplete, Panic). A request counts once: at its ResponseComplete or Panic event, or
// at its RequestReceived event when the log holds nothing else for its auditID (an audit policy
// that omits the later stages). The user is the one flow control classifies: the impersonated
// user when the request impersonates, else the authenticated one, with the groups the event
// records (kube-apiserver logs the groups after authentication and impersonation).
//
// Decoding reads only the fields classification needs and skips the rest without building
// them; repeated strings (users, groups, resources) are interned. A line that is not a valid
// event is counted and reported with its number, never fatal.
package audit
