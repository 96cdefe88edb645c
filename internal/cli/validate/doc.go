// Package validate implements `apf-operator validate`, the offline validator: it reads
// RequestPriority and FlowSchema manifests from files, directories (recursively) or standard
// input, and runs on the whole set the same rules the admission webhooks run in a cluster
// (package internal/validation), so that a GitOps repository can check its APF configuration
// before a change merges, with no cluster.
//
// Usage:
//
//	apf-operator validate -f PATH [-f PATH]... [PATH...] [-o text|json]
//
// A PATH is a file, a directory (its .yaml, .yml and .json files, recursively) or `-` for
// standard input. Files may hold several YAML documents; documents of other API groups are
// skipped, and `kind: List` documents are searched for items. Decoding is strict: an unknown or
// duplicate field is an error. Across the set, two RequestPriority objects with one level and
// two objects of one kind with one name are errors; a FlowSchema naming a RequestPriority that
// is not in the set is a warning (it may already exist in the cluster). Authorization for the
// exempt level is not checked: it depends on who applies the manifests.
//
// Each finding is a line `FILE:DOC: FIELD PATH: MESSAGE` (DOC counts the documents of the file
// from 0; warnings read `FILE:DOC: warning: ...`), or with -o json one JSON object. The exit
// code is 0 when there is no error (warnings allowed), 1 when there is at least one, and 2 for
// a usage error.
package validate
