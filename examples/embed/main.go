// Command embed is a minimal HTTP server that imports apf-operator's public filter package
// from outside the repository's module: it reads RequestPriority and FlowSchema manifests,
// authenticates each request by a stand-in (the X-Demo-User header; a real server uses its own
// authenticator), and serves every path behind API Priority and Fairness.
//
//	go run . -listen 127.0.0.1:8080 testdata
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/apf-operator/apf-operator/pkg/apf"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve on")
	flag.Parse()
	handler, err := newHandler(flag.Args()...)
	if err != nil {
		log.Fatal(err)
	}
	server := &http.Server{Addr: *listen, Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(server.ListenAndServe())
}

// newHandler builds the server's handler from the manifests at paths.
func newHandler(paths ...string) (http.Handler, error) {
	src, err := apf.LoadManifests(paths...)
	if err != nil {
		return nil, err
	}
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 100, RequestTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	src.Apply(f)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "served %s\n", r.URL.Path)
	})
	return authenticate(f.Handler(api)), nil
}

// authenticate stands for a real authenticator: it takes the user from X-Demo-User and the
// groups from X-Demo-Groups (comma-separated). Never do this in a real server.
func authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name := r.Header.Get("X-Demo-User"); name != "" {
			groups := strings.Split(r.Header.Get("X-Demo-Groups"), ",")
			r = r.WithContext(apf.WithUser(r.Context(), name, groups))
		}
		next.ServeHTTP(w, r)
	})
}
