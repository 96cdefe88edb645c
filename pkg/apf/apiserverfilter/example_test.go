package apiserverfilter_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
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
