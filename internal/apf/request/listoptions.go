package request

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// listOptions reads the query of a collection GET as kube-apiserver's RequestInfoFactory does:
// it decodes the query into ListOptions and, when that fails (a malformed limit,
// timeoutSeconds, labelSelector or fieldSelector), falls back to reading watch alone. It
// returns whether the request is a watch and the name a valid fieldSelector requires
// (metadata.name=<n> or ==<n>, n a valid path segment), else "".
//
// The decoding is checked (which parses the selectors, and allocates) only when its outcome
// matters: a fieldSelector that may name the object, or a watch value the two rules read
// differently. A list or watch with a labelSelector alone, the common case, allocates nothing.
func listOptions(rawQuery string) (watch bool, name string) {
	w, hasWatch := queryValue(rawQuery, "watch")
	fieldSel, hasFieldSel := queryValue(rawQuery, "fieldSelector")
	decoded := hasWatch && w != "0" && !strings.EqualFold(w, "false") // runtime.Convert_Slice_string_To_bool
	lower := strings.ToLower(w)
	fallback := hasWatch && lower != "false" && lower != "0"
	if fieldSel == "" && decoded == fallback {
		return decoded, ""
	}
	var sel fields.Selector
	ok := intParam(rawQuery, "limit") && intParam(rawQuery, "timeoutSeconds") && labelsParse(rawQuery)
	if ok && hasFieldSel && fieldSel != "" {
		var err error
		sel, err = fields.ParseSelector(fieldSel)
		ok = err == nil
	}
	if !ok { // decoding failed: watch unless "false" or "0", after lower-casing
		return fallback, ""
	}
	watch = decoded
	if sel != nil {
		if n, found := sel.RequiresExactMatch("metadata.name"); found && len(content.IsPathSegmentName(n)) == 0 {
			name = n
		}
	}
	return watch, name
}

// intParam reports whether the integer parameter key is absent or decodes as an int64.
func intParam(rawQuery, key string) bool {
	v, ok := queryValue(rawQuery, key)
	if !ok {
		return true
	}
	_, err := strconv.ParseInt(v, 10, 64)
	return err == nil
}

// labelsParse reports whether the labelSelector parameter is absent or parses.
func labelsParse(rawQuery string) bool {
	v, ok := queryValue(rawQuery, "labelSelector")
	if !ok || v == "" {
		return true
	}
	_, err := labels.Parse(v)
	return err == nil
}
