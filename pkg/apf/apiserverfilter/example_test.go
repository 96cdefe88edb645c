package apiserverfilter_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"
)

// WithPriorityAndFairness reads what the server's earlier filters put in the context: here a
// stand-in for WithRequestInfo and WithAuthentication. In a real server it goes in
// Config.BuildHandlerChainFunc (see the package documentation).
func ExampleWithPriorityAndFairness() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	handler := apiserverfilter.WithPriorityAndFairness(api, f, func(_ *http.Request, info *apirequest.RequestInfo) bool {
		return info.Verb == "watch" || info.Subresource == "exec"
	})

	infos := &apirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	r := httptest.NewRequest("GET", "/api/v1/namespaces/default/pods", nil)
	info, err := infos.NewRequestInfo(r)
	if err != nil {
		panic(err)
	}
	ctx := apirequest.WithRequestInfo(r.Context(), info)
	ctx = apirequest.WithUser(ctx, &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}})
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, r.WithContext(ctx))
	fmt.Print(rec.Code, " ", rec.Body.String())
	fmt.Println(rec.Header().Get(apf.HeaderFlowSchema), rec.Header().Get(apf.HeaderRequestPriority))
	// Output:
	// 200 ok
	// system-top system-top
}

// InstallDebugHandlers serves the debug endpoints on the server's mux (in a GenericAPIServer,
// s.Handler.NonGoRestfulMux), each request authorized by the server's authorizer (here one that
// allows user "operator" only).
func ExampleInstallDebugHandlers() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	operators := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == "operator" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	mux := http.NewServeMux()
	apiserverfilter.InstallDebugHandlers(mux, f, operators)

	for _, name := range []string{"operator", "mallory"} {
		r := httptest.NewRequest("GET", apiserverfilter.DebugPathPrefix+"explain?user=bob&path=/api/v1/namespaces/default/pods", nil)
		r = r.WithContext(apirequest.WithUser(r.Context(), &user.DefaultInfo{Name: name}))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		fmt.Println(name, rec.Code)
	}
	// Output:
	// operator 200
	// mallory 403
}
