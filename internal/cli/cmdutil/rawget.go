package cmdutil

import (
	"context"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// RawGet reads a non-resource path of the API server (such as /metrics, or
// /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1) as text through a
// REST client from kubectl's configuration, streamed within apfmetrics' caps (of /metrics only
// the APF families are kept).
func RawGet(ctx context.Context, c rest.Interface, path string) ([]byte, error) {
	// AbsPath would escape a query: it goes in as parameters.
	path, query, _ := strings.Cut(path, "?")
	req := c.Get().AbsPath(path).SetHeader("Accept", "text/plain")
	params, err := url.ParseQuery(query)
	if err != nil {
		return nil, err
	}
	for name, values := range params {
		for _, v := range values {
			req = req.Param(name, v)
		}
	}
	return apfmetrics.Fetch(ctx, req, path)
}
