package harness

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// UserClient adds the envtest user name (no groups) and returns an HTTP client authenticated
// as that user and the URL of ConfigMaps in namespace, which test/top and
// test/troubleshooting flood.
func (c *Cluster) UserClient(name, namespace string) (*http.Client, string, error) {
	user, err := c.Env.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		return nil, "", fmt.Errorf("adding user %s: %w", name, err)
	}
	client, err := rest.HTTPClientFor(user.Config())
	if err != nil {
		return nil, "", err
	}
	return client, strings.TrimSuffix(user.Config().Host, "/") + "/api/v1/namespaces/" + namespace + "/configmaps", nil
}

// Flood GETs url from workers goroutines, each sending its next request when the last one
// answered, for d (or until ctx ends), and returns the number of 429 responses.
func Flood(ctx context.Context, client *http.Client, url string, workers int, d time.Duration) int64 {
	return flood(ctx, client, url, workers, d, false)
}

// FloodUntilRejected is Flood that stops at the first 429 response.
func FloodUntilRejected(ctx context.Context, client *http.Client, url string, workers int, d time.Duration) int64 {
	return flood(ctx, client, url, workers, d, true)
}

func flood(ctx context.Context, client *http.Client, url string, workers int, d time.Duration, stopAtRejection bool) int64 {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var rejected atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if err != nil {
					return
				}
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusTooManyRequests {
					rejected.Add(1)
					if stopAtRejection {
						cancel()
					}
				}
			}
		})
	}
	wg.Wait()
	return rejected.Load()
}
