// Package request describes an incoming API request the way flow control sees it (Attributes)
// and resolves those attributes from an *http.Request (Resolver).
//
// The default resolver, KubernetesResolver, parses the URL exactly as a Kubernetes API server
// does (k8s.io/apiserver's RequestInfoFactory): /api/v1/... and /apis/<group>/<version>/...
// are resource requests with a verb derived from the HTTP method (get, list, watch, create,
// update, patch, delete, deletecollection; "" for any other method, such as OPTIONS or TRACE)
// or from a /watch/ or /proxy/ path prefix, a namespace, a resource, a name and a subresource
// (empty path segments are kept: /api/v1//pods has resource ""); every other path is a
// non-resource request. The differential test requestinfo_test.go checks this against
// k8s.io/apiserver's RequestInfoFactory itself.
// The identity comes from the request context, where the embedding server's authenticator put
// it (WithUser); a request without one is anonymous. The front-proxy headers X-Remote-User and
// X-Remote-Group are believed only with KubernetesResolver.TrustProxyHeaders, which is safe only
// behind a verified front proxy.
//
// Attributes of a non-resource request: apiGroup, resource, subresource, namespace and name are
// absent (DESIGN.md decision 4); for a resource request, path is absent. Absence is carried by
// ResourceRequest, not by empty strings, because an empty namespace (a cluster-scoped object)
// is present and can be tested.
package request
