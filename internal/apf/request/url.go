package request

import (
	"net/url"
	"strconv"
	"strings"
)

// maxSegments is how many path segments ParseURL examines: the longest prefix it interprets is
// apis/<group>/<version>/watch/namespaces/<ns>/<resource>/<name>/<subresource> (9 segments);
// the rest of a longer path does not change the attributes.
const maxSegments = 10

// ParseURL fills the work attributes of out (Verb, APIGroup, Resource, Subresource, Namespace,
// Name, Path, ResourceRequest, LongRunning) from an HTTP method, URL path and raw query, the way
// a Kubernetes API server does; it clears User and Groups. It allocates nothing except to
// decode percent-encoded query parameters and to parse the label and field selectors of a list
// or watch.
//
// Paths under /api/<version>/ and /apis/<group>/<version>/ are resource requests; so are their
// /watch/ and /proxy/ forms, whose verb is watch or proxy. The verb of a resource request whose
// method is none of GET, HEAD, POST, PUT, PATCH and DELETE (OPTIONS, TRACE, custom methods) is
// "". A GET of a collection is list, or watch when its first watch parameter is present and is
// neither "0" nor "false" (so ?watch, ?watch= and ?watch=yes are watches); a DELETE of a
// collection is deletecollection. A list or watch whose fieldSelector requires
// metadata.name=<n> has Name n. Empty path segments are kept (/api/v1//pods has resource "" and
// name "pods"). A malformed resource path (e.g. /api/v1/watch with nothing after it) is treated
// as a non-resource request; kube-apiserver answers it with an error before flow control.
func ParseURL(method, path, rawQuery string, out *Attributes) {
	*out = Attributes{Verb: methodVerb(method), Path: path}
	var segs [maxSegments]string
	n := splitPath(path, &segs)
	p, group, ok := apiPrefix(&segs, n)
	if !ok {
		return
	}
	verb := resourceVerb(method)
	if segs[p] == VerbWatch || segs[p] == VerbProxy {
		if n-p < 2 {
			return
		}
		verb = segs[p]
		p++
	}
	*out = Attributes{Verb: verb, APIGroup: group, ResourceRequest: true}
	p = namespacePart(&segs, n, p, out)
	out.Resource = segs[p]
	if n-p >= 2 {
		out.Name = segs[p+1]
	}
	if n-p >= 3 && verb != VerbProxy {
		out.Subresource = segs[p+2]
	}
	refineVerb(rawQuery, out)
}

// splitPath stores the first maxSegments segments of path, without its leading and trailing
// slashes, in segs and returns how many it stored.
func splitPath(path string, segs *[maxSegments]string) int {
	path = strings.Trim(path, "/")
	if path == "" {
		return 0
	}
	n := 0
	for n < maxSegments {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			segs[n] = path
			return n + 1
		}
		segs[n] = path[:i]
		path = path[i+1:]
		n++
	}
	return n
}

// apiPrefix recognises /api/<version>/<rest> and /apis/<group>/<version>/<rest> and returns the
// index of <rest> and the group.
func apiPrefix(segs *[maxSegments]string, n int) (rest int, group string, ok bool) {
	switch {
	case n >= 3 && segs[0] == "api":
		return 2, "", true
	case n >= 4 && segs[0] == "apis":
		return 3, segs[1], true
	}
	return 0, "", false
}

// namespacePart consumes namespaces/<ns> when a resource follows it and returns the index of the
// resource. namespaces/<ns> alone, and namespaces/<ns>/status or /finalize, address the
// Namespace object itself (resource namespaces, name <ns>).
func namespacePart(segs *[maxSegments]string, n, p int, out *Attributes) int {
	if segs[p] != "namespaces" || n-p < 2 {
		return p
	}
	out.Namespace = segs[p+1]
	if n-p > 2 && segs[p+2] != "status" && segs[p+2] != "finalize" {
		return p + 2
	}
	return p
}

// refineVerb turns get into list or watch and delete into deletecollection for collections, and
// flags a followed log as long-running.
func refineVerb(rawQuery string, out *Attributes) {
	if out.Name == "" && out.Verb == VerbGet {
		out.Verb = VerbList
		if tooManyParams(rawQuery) {
			rawQuery = "" // kube-apiserver's url.Values hold nothing then
		}
		var watch bool
		watch, out.Name = listOptions(rawQuery)
		if watch {
			out.Verb = VerbWatch
		}
	}
	if out.Name == "" && out.Verb == VerbDelete {
		out.Verb = VerbDeleteCollection
	}
	if out.Subresource == "log" {
		if v, ok := queryValue(rawQuery, "follow"); ok && parseBool(v) {
			out.LongRunning = true
		}
	}
}

// methodVerb is the verb of a non-resource request: the lower-case method.
func methodVerb(method string) string {
	switch method {
	case "GET":
		return "get"
	case "HEAD":
		return "head"
	case "POST":
		return "post"
	case "PUT":
		return "put"
	case "PATCH":
		return "patch"
	case "DELETE":
		return "delete"
	case "OPTIONS":
		return "options"
	}
	return strings.ToLower(method)
}

// resourceVerb is the verb of a resource request before refineVerb; empty for other methods.
func resourceVerb(method string) string {
	switch method {
	case "GET", "HEAD":
		return VerbGet
	case "POST":
		return VerbCreate
	case "PUT":
		return VerbUpdate
	case "PATCH":
		return VerbPatch
	case "DELETE":
		return VerbDelete
	}
	return ""
}

// queryValue returns the decoded value of the first key=value pair of rawQuery whose decoded
// key is key, skipping the pairs url.ParseQuery drops (with a ';' or a malformed escape), as
// kube-apiserver's url.Values do. It decodes (and allocates) only keys and values that are
// percent-encoded.
func queryValue(rawQuery, key string) (string, bool) {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if dk, ok := unescape(k); ok && dk == key {
			if dv, ok := unescape(v); ok {
				return dv, true
			}
		}
	}
	return "", false
}

// unescape decodes a query component; false when it is malformed.
func unescape(s string) (string, bool) {
	if !strings.ContainsAny(s, "%+") {
		return s, true
	}
	d, err := url.QueryUnescape(s)
	return d, err == nil
}

// maxQueryParams is net/url's limit on query parameters (Go 1.26: a query with more parses to
// no values at all).
const maxQueryParams = 10000

func tooManyParams(rawQuery string) bool { return strings.Count(rawQuery, "&")+1 > maxQueryParams }

// parseBool reads a query flag as strconv.ParseBool does; a malformed value is false.
func parseBool(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}
