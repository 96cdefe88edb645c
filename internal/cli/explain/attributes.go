package explain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// resourceVerbs are the verbs kube-apiserver's RequestInfoFactory gives a resource request
// (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go): from the HTTP method, list and
// watch for a collection, deletecollection, and proxy from the /proxy/ path prefix.
var resourceVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "proxy"}

// nonResourceVerbs are the verbs of a non-resource request: the lower-case HTTP method.
var nonResourceVerbs = []string{"get", "head", "post", "put", "patch", "delete", "options"}

// lowerName is what a resource, subresource or group segment may be: kube-apiserver's URLs
// spell them in lower case.
var lowerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// version is an API version segment (v1, v1beta2, v2alpha1), as in deployments.v1.apps.
var version = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// verbs are every verb --verb takes, resource and non-resource, for completion.
func verbs() []string {
	out := slices.Clone(resourceVerbs)
	for _, v := range nonResourceVerbs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// checkVerb returns an error naming the valid verbs when verb is not one kube-apiserver
// produces for the kind of request.
func checkVerb(verb string, resourceRequest bool) error {
	valid, kind := resourceVerbs, "a resource request (--resource)"
	if !resourceRequest {
		valid, kind = nonResourceVerbs, "a non-resource request (--path): the lower-case HTTP method"
	}
	if slices.Contains(valid, verb) {
		return nil
	}
	hint := ""
	if lower := strings.ToLower(verb); lower != verb && slices.Contains(valid, lower) {
		hint = fmt.Sprintf(" (kube-apiserver's verbs are lower case: --verb %s)", lower)
	}
	return fmt.Errorf("--verb %q is not a verb of %s; use one of %s%s", verb, kind, strings.Join(valid, ", "), hint)
}

// parseResource reads --resource as kubectl users write it: RESOURCE[.VERSION][.GROUP][/SUBRESOURCE],
// e.g. pods, pods/status, deployments.apps, deployments.v1.apps/scale. The version is dropped
// (kube-apiserver's FlowSchemas do not test it).
func parseResource(s string, a *request.Attributes) error {
	resource, sub, hasSub := strings.Cut(s, "/")
	if hasSub && (sub == "" || strings.Contains(sub, "/")) {
		return fmt.Errorf("--resource %q: want RESOURCE[.GROUP][/SUBRESOURCE], e.g. pods/status", s)
	}
	name, group, _ := strings.Cut(resource, ".")
	if first, rest, ok := strings.Cut(group, "."); ok && version.MatchString(first) {
		group = rest
	} else if version.MatchString(group) {
		group = "" // pods.v1: the core group
	}
	if !lowerName.MatchString(name) || (hasSub && !lowerName.MatchString(sub)) {
		return fmt.Errorf("--resource %q: resources and subresources are lower-case plurals as kube-apiserver's URLs "+
			"spell them, e.g. pods, deployments.apps, pods/status", s)
	}
	for _, seg := range strings.Split(group, ".") {
		if group != "" && !lowerName.MatchString(seg) {
			return fmt.Errorf("--resource %q: the API group %q is not a lower-case DNS name, e.g. apps", s, group)
		}
	}
	a.Resource, a.Subresource, a.APIGroup = name, sub, group
	return nil
}
