package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/pkg/apf"
)

// widgets is a path the fake authorizer lets "tenant" list.
const widgets = "/apis/demo.apf-operator.io/v1alpha1/namespaces/default/widgets"

// TestHandlerChainOrder checks where the filter sits: after authentication and impersonation
// (it sees the impersonated user; unauthenticated requests never reach it) and before
// authorization (a forbidden request is classified).
func TestHandlerChainOrder(t *testing.T) {
	handler := testChain(t)
	cases := []struct {
		name, token, impersonate string
		status                   int
		schema, priority         string
	}{
		{"unauthenticated: 401 before flow control", "", "", http.StatusUnauthorized, "", ""},
		{"authorized", "tenant", "", http.StatusOK, "tenant", "tenant"},
		{"forbidden, classified first", "stranger", "", http.StatusForbidden, "non-top-backstop", "tenant"},
		{"impersonation before flow control", "admin", "tenant", http.StatusOK, "tenant", "tenant"},
		{"forbidden impersonation: 403 before flow control", "stranger", "tenant", http.StatusForbidden, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, widgets, nil)
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.impersonate != "" {
				r.Header.Set("Impersonate-User", tc.impersonate)
			}
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, r)
			schema, priority := w.Header().Get(apf.HeaderFlowSchema), w.Header().Get(apf.HeaderRequestPriority)
			if w.Code != tc.status || schema != tc.schema || priority != tc.priority {
				t.Errorf("got %d, schema %q, priority %q; want %d, %q, %q: %s",
					w.Code, schema, priority, tc.status, tc.schema, tc.priority, w.Body)
			}
		})
	}
}

// testChain is the server's handler chain around an API handler that answers 200, with a
// bearer-token stand-in for authentication (the token is the user name) and an authorizer
// that lets admin do anything and tenant list widgets. FlowSchema "tenant" sends user tenant
// to RequestPriority "tenant", the only (so the logically lowest) level.
func testChain(t *testing.T) http.Handler {
	t.Helper()
	filter, err := apf.New(apf.Options{ServerConcurrencyLimit: 4})
	if err != nil {
		t.Fatal(err)
	}
	filter.Update([]flowv1.RequestPriority{{ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Spec: flowv1.RequestPrioritySpec{PriorityLevel: 100, AssuredConcurrencyShares: ptr.To[int32](1),
			QueuesPerWidth: ptr.To[int32](1), QueueLengthLimit: ptr.To[int32](1)}}},
		[]flowv1.FlowSchema{{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}, Spec: flowv1.FlowSchemaSpec{
			MatchingPriority: 10, RequestPriority: flowv1.RequestPriorityReference{Name: "tenant"},
			Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{Field: "user", Value: "tenant"}}}}}}}})
	c := genericapiserver.NewConfig(Codecs)
	c.FeatureGate = utilfeature.DefaultFeatureGate
	c.RequestInfoResolver = genericapiserver.NewRequestInfoResolver(c)
	c.Authentication.Authenticator = authenticator.RequestFunc(bearerUser)
	c.Authorization.Authorizer = authorizer.AuthorizerFunc(adminOrTenantListing)
	muxComplete := make(chan struct{})
	close(muxComplete)
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	return handlerChain(filter, muxComplete)(ok, c)
}

// bearerUser authenticates the bearer token as the user of that name.
func bearerUser(r *http.Request) (*authenticator.Response, bool, error) {
	name := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if name == "" {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name, Groups: []string{user.AllAuthenticated}}}, true, nil
}

// adminOrTenantListing allows admin everything and tenant listing widgets.
func adminOrTenantListing(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch name := a.GetUser().GetName(); {
	case name == "admin", name == "tenant" && a.GetResource() == "widgets" && a.GetVerb() == "list":
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// TestCheckChainConfig checks that the options whose filters the chain leaves out are refused
// with the field's name.
func TestCheckChainConfig(t *testing.T) {
	if err := checkChainConfig(genericapiserver.NewConfig(Codecs)); err != nil {
		t.Fatalf("the default config is refused: %v", err)
	}
	cases := map[string]func(*genericapiserver.Config){
		"ShutdownWatchTerminationGracePeriod": func(c *genericapiserver.Config) { c.ShutdownWatchTerminationGracePeriod = 1 },
		"ShutdownSendRetryAfter":              func(c *genericapiserver.Config) { c.ShutdownSendRetryAfter = true },
	}
	for field, set := range cases {
		c := genericapiserver.NewConfig(Codecs)
		set(c)
		if err := checkChainConfig(c); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s set: got %v, want an error naming it", field, err)
		}
	}
}
