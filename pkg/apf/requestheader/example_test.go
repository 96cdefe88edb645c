package requestheader_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/requestheader"
)

// An aggregated API server believes kube-apiserver's X-Remote-* headers only from a connection
// whose client certificate the front-proxy CA signed. A request without one stays anonymous,
// whatever headers it sends.
func ExampleNew() {
	ca, err := requestheader.LoadClientCA("testdata/front-proxy-ca.crt") // --requestheader-client-ca-file
	if err != nil {
		fmt.Println("no CA:", err != nil)
		return
	}
	id, err := requestheader.New(requestheader.Options{ClientCA: ca, AllowedNames: []string{"front-proxy-client"}})
	if err != nil {
		panic(err)
	}
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600, Identity: id})
	if err != nil {
		panic(err)
	}
	handler := f.Handler(http.NotFoundHandler())

	spoofed := httptest.NewRequest("GET", "/api/v1/secrets", nil) // plain HTTP: no client certificate
	spoofed.Header.Set("X-Remote-User", "mallory")
	spoofed.Header.Set("X-Remote-Group", "system:masters")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, spoofed)
	fmt.Println(rec.Header().Get(apf.HeaderFlowSchema))
	// Output:
	// non-top-backstop
}
