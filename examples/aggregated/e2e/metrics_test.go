package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// rejectedMetric reads the sample server's /metrics as the admin (system:masters, allowed
// without a SubjectAccessReview) and sums apf_operator_rejected_requests_total of schema.
func rejectedMetric(t *testing.T, certs *pki, admin *rest.Config, port int, schema string) float64 {
	t.Helper()
	c := direct(t, certs.servingCA.pem(), admin.CertData, admin.KeyData)
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
	r, err := get(c, url, nil)
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("GET %s: %v, status %d: %.300s", url, err, r.status, r.body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	family, ok := families["apf_operator_rejected_requests_total"]
	if !ok {
		t.Fatal("the sample server's /metrics has no apf_operator_rejected_requests_total")
	}
	sum := 0.0
	for _, m := range family.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "flow_schema" && l.GetValue() == schema {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
