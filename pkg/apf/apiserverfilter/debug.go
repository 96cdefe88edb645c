package apiserverfilter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apf-operator/apf-operator/pkg/apf"
)

// DebugPathPrefix is the path under which InstallDebugHandlers serves.
const DebugPathPrefix = "/debug/apf-operator/"

// Paths InstallDebugHandlers serves, under DebugPathPrefix.
const (
	// DebugExplain answers, as JSON (apf.Explanation), which FlowSchema, RequestPriority,
	// distinguisher, width and queue hand a hypothetical request would get. Query parameters:
	// path (its URL path and query, required), method (default GET), user (default anonymous)
	// and group (repeated).
	DebugExplain = "explain"
	// DebugPriorityLevels is Filter.DumpPriorityLevels, as text.
	DebugPriorityLevels = "dump_priority_levels"
	// DebugQueues is Filter.DumpQueues, as text.
	DebugQueues = "dump_queues"
	// DebugState is Filter.DebugHandler: the configuration in force and the queues, as JSON.
	DebugState = "state"
)

// Mux is where InstallDebugHandlers registers its paths: http.ServeMux and the
// PathRecorderMux of a GenericAPIServer (Handler.NonGoRestfulMux) are muxes.
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// InstallDebugHandlers serves f's debug endpoints on mux under DebugPathPrefix (DebugExplain,
// DebugPriorityLevels, DebugQueues, DebugState), for operators of the server. They name every
// FlowSchema and RequestPriority, so each request is authorized with authz, the server's
// authorizer, as a non-resource get of its path by the request's user (request.UserFrom):
// they are protected even on a mux outside the server's handler chain, and on the
// NonGoRestfulMux the server's own authorization filter has checked the same thing first, as
// it does for kube-apiserver's /debug/api_priority_and_fairness/ paths. A request without a
// user is forbidden. It panics if f or authz is nil.
func InstallDebugHandlers(mux Mux, f *apf.Filter, authz authorizer.Authorizer) {
	if f == nil || authz == nil {
		panic("apiserverfilter.InstallDebugHandlers: the apf.Filter and the authorizer are required")
	}
	text := func(dump func(io.Writer) error) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeDump(w, dump) })
	}
	handlers := map[string]http.Handler{
		DebugExplain:        http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveExplain(w, r, f) }),
		DebugPriorityLevels: text(f.DumpPriorityLevels),
		DebugQueues:         text(f.DumpQueues),
		DebugState:          f.DebugHandler(),
	}
	for name, h := range handlers {
		mux.Handle(DebugPathPrefix+name, &authorized{next: h, authz: authz})
	}
}

// authorized serves next to the users authz allows to get the request's path.
type authorized struct {
	next  http.Handler
	authz authorizer.Authorizer
}

func (a *authorized) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: use GET", http.StatusMethodNotAllowed)
		return
	}
	u, ok := apirequest.UserFrom(r.Context())
	attrs := authorizer.AttributesRecord{User: u, Verb: "get", Path: r.URL.Path}
	if !ok {
		responsewriters.Forbidden(attrs, w, r, "no authenticated user in the request", statusCodecs)
		return
	}
	decision, reason, err := a.authz.Authorize(r.Context(), attrs)
	if decision != authorizer.DecisionAllow {
		if err != nil {
			reason = err.Error()
		}
		responsewriters.Forbidden(attrs, w, r, reason, statusCodecs)
		return
	}
	a.next.ServeHTTP(w, r)
}

// writeDump writes a text dump, or 500 if it fails.
func writeDump(w http.ResponseWriter, dump func(io.Writer) error) {
	var b bytes.Buffer
	if err := dump(&b); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// requestInfoFactory parses hypothetical requests' paths as a Kubernetes API server does.
var requestInfoFactory = &apirequest.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// serveExplain answers DebugExplain.
func serveExplain(w http.ResponseWriter, r *http.Request, f *apf.Filter) {
	a, err := explainAttributes(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(f.ExplainQueues(a))
}

// explainAttributes reads the hypothetical request of a DebugExplain query.
func explainAttributes(r *http.Request) (apf.Attributes, error) {
	q := r.URL.Query()
	path, method := q.Get("path"), q.Get("method")
	if path == "" || path[0] != '/' {
		return apf.Attributes{}, errors.New("query parameter path: give the URL path of the request to explain, " +
			"starting with /, e.g. path=/api/v1/namespaces/default/pods")
	}
	if method == "" {
		method = http.MethodGet
	}
	hypothetical, err := http.NewRequestWithContext(r.Context(), method, path, nil)
	if err != nil {
		return apf.Attributes{}, fmt.Errorf("query parameters method and path: %w", err)
	}
	info, err := requestInfoFactory.NewRequestInfo(hypothetical)
	if err != nil {
		return apf.Attributes{}, fmt.Errorf("query parameter path: %w", err)
	}
	return attributes(info, &user.DefaultInfo{Name: q.Get("user"), Groups: q["group"]}), nil
}
