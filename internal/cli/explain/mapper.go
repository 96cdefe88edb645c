package explain

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// resolveResource expands a's resource as kubectl does against the cluster's discovery: short
// names and singulars (po, deploy, pod) become the plural, and a resource given without its
// group gets the group the cluster serves it in (deployments: apps). It returns a note when the
// cluster serves no such resource; a is then explained as given.
func resolveResource(cfg *rest.Config, a *request.Attributes) string {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "resource not checked against the cluster's discovery: " + err.Error()
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Group: a.APIGroup, Resource: a.Resource})
	if err != nil {
		return "the cluster serves no resource " + resourceArg(a) + " (" + err.Error() + "); explained as given"
	}
	a.Resource, a.APIGroup = gvr.Resource, gvr.Group
	return ""
}

// resourceArg is a's resource as --resource spells it.
func resourceArg(a *request.Attributes) string {
	s := a.Resource
	if a.APIGroup != "" {
		s += "." + a.APIGroup
	}
	return s
}
