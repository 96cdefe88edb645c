// Package validate implements `apf-operator validate` (and `kubectl apf validate`), the offline
// validator: it reads RequestPriority, FlowSchema and EventRateLimit manifests from files,
// directories (recursively) or standard input, and checks each object against its CRD's own
// OpenAPI schema and CEL rules (package internal/validation/crdschema: what kube-apiserver
// runs) and the whole set against the rules the admission webhooks run in a cluster (package
// internal/validation), so that a GitOps repository can check its APF configuration before a
// change merges, with no cluster.
//
// Usage:
//
//	apf-operator validate -f PATH [-f PATH]... [PATH...] [-o text|json|yaml|github] [--strict]
//	    [--allow-empty] [--exclude GLOB]... [--target native|filter] [--per-directory]
//
// A PATH is a file, a directory (its .yaml, .yml and .json files, recursively, less those an
// --exclude glob matches) or `-` for standard input, read by package internal/manifest.
// Files may hold several YAML documents; documents of other API groups are skipped (those
// without apiVersion or kind, or whose group looks like a misspelling of this operator's, are
// errors, as kubectl apply refuses them), `kind: List` documents are searched for items,
// and kube-apiserver's own flowcontrol.apiserver.k8s.io objects are a warning each that points
// to `apf-operator import`. Decoding is lenient about types (a value of the wrong type is one
// finding on its field, in the API server's words, and the rest of the object is still
// checked) and strict about names: an unknown or duplicate field is an error. Across the set,
// two RequestPriority objects with one level and two objects of one kind with one name are
// errors; a FlowSchema naming a RequestPriority that is not in the set is a warning (it may
// already exist in the cluster). Authorization for the exempt level is not checked: it depends
// on who applies the manifests. EventRateLimit objects are checked on their own; they are not
// part of the APF set and not projected.
//
// --target says what the configuration must be fit for. `filter` checks the admission rules
// above, which is all the in-process filter needs. `native` (the default, since the chart
// installs enforcement: native) also projects the
// set onto kube-apiserver's flowcontrol.apiserver.k8s.io/v1 objects with package
// internal/native, as the operator would into a cluster holding none of its native objects,
// and reports each RequestPriority or FlowSchema that cannot be projected exactly
// (NotExpressible: one error per field, with the field path and the fix) or that finds no free
// matching precedence (PrecedenceExhausted: an error about the object).
//
// Each finding is a line `FILE:LINE:COLUMN: FIELD: MESSAGE` (warnings read
// `FILE:LINE:COLUMN: warning: ...`), LINE:COLUMN being where the field's key is written in the
// file (a missing field: its nearest written parent; a whole object: its first key; a YAML
// error: the line the parser names, in the file); findings are sorted by file, line and
// column. -o json and -o yaml give them as one document with the counts, -o github as GitHub
// Actions workflow commands (`::error file=FILE,line=LINE,col=COLUMN,title=KIND/NAME
// FIELD::MESSAGE`, escaped as GitHub's toolkit escapes). The last line on standard error
// counts the objects checked, names the target and counts the errors and warnings and the
// documents of other kinds skipped. With --per-directory each subdirectory of a directory
// given is checked as its own set (one cluster of a fleet repository). The exit code is 0
// when there is no error (warnings allowed, unless --strict), 1 when there is at least one
// (or a warning with --strict; no object at all without --allow-empty is an error finding,
// so that every output's counts agree with the exit code), and 2 for a usage error or when
// the findings cannot be written.
package validate
