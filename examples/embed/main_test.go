package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/apf-operator/apf-operator/pkg/apf"
)

// TestServe builds the filter from the sample manifests and serves requests through a real
// HTTP server: a tenant's request is classified by the tenant FlowSchema, an anonymous one by
// the catch-all backstop.
func TestServe(t *testing.T) {
	handler, err := newHandler("testdata")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	for _, tc := range []struct {
		user, groups, want string
	}{
		{"alice", "tenants,system:authenticated", "tenant-workloads"},
		{"", "", "non-top-backstop"},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/team-a/pods", nil)
		req.Header.Set("X-Demo-User", tc.user)
		req.Header.Set("X-Demo-Groups", tc.groups)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "served /api/v1/namespaces/team-a/pods\n" {
			t.Errorf("user %q: %d %q; want 200 and the API's answer", tc.user, resp.StatusCode, body)
		}
		if got := resp.Header.Get(apf.HeaderFlowSchema); got != tc.want {
			t.Errorf("user %q: FlowSchema %q; want %q", tc.user, got, tc.want)
		}
	}
}

func TestBadManifests(t *testing.T) {
	if _, err := newHandler("testdata/missing.yaml"); err == nil {
		t.Error("newHandler(missing file) succeeded")
	}
}
