// Package validate implements `apf-operator validate`, the offline validator: it reads
// RequestPriority, FlowSchema and EventRateLimit manifests from files, directories (recursively) or standard
// input, and runs on the whole set the same rules the admission webhooks run in a cluster
// (package internal/validation), so that a GitOps repository can check its APF configuration
// before a change merges, with no cluster.
//
// Usage:
//
//	apf-operator validate -f PATH [-f PATH]... [PATH...] [-o text|json|github] [--target filter|native]
//
// A PATH is a file, a directory (its .yaml, .yml and .json files, recursively) or `-` for
// standard input. Files may hold several YAML documents; documents of other API groups are
// skipped, and `kind: List` documents are searched for items. Decoding is strict: an unknown or
// duplicate field is an error. Across the set, two RequestPriority objects with one level and
// two objects of one kind with one name are errors; a FlowSchema naming a RequestPriority that
// is not in the set is a warning (it may already exist in the cluster). Authorization for the
// exempt level is not checked: it depends on who applies the manifests. EventRateLimit objects
// are checked on their own (validation.EventRateLimitSpec); they are not part of the APF set and
// not projected.
//
// --target says what the configuration must be fit for. `filter` (the default) checks the
// admission rules above, which is all the in-process filter needs. `native` also projects the
// set onto kube-apiserver's flowcontrol.apiserver.k8s.io/v1 objects with package
// internal/native, as the operator would into a cluster holding none of its native objects,
// and reports each RequestPriority or FlowSchema that cannot be projected exactly
// (NotExpressible: one error per field, with the field path and the fix) or that finds no free
// matching precedence (PrecedenceExhausted: an error about the document). A FlowSchema whose
// RequestPriority is the one not projected is not reported again.
//
// Each finding is a line `FILE:DOC: FIELD PATH: MESSAGE` (DOC counts the documents of the file
// from 0; warnings read `FILE:DOC: warning: ...`); with -o json the findings are one JSON
// object, each with the line of the file on which its field (or document) is written, and the
// counts of errors and warnings; with -o github each is a GitHub Actions workflow command
// (`::error file=FILE,line=LINE,title=KIND/NAME FIELD::MESSAGE`, escaped as GitHub's toolkit
// escapes), which the runner shows as an annotation on the file. The last line on standard
// error counts the objects checked, the errors and warnings, and the documents of other kinds
// skipped. The exit code is 0 when there is no error (warnings allowed), 1 when there is at
// least one, and 2 for a usage error or when the findings cannot be written.
package validate
