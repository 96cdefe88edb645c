package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// TestExplainOperatorRoute checks that explain reports the operator's own requests as taken by
// its route on kube-apiserver's workload-high, and another service account's as before.
func TestExplainOperatorRoute(t *testing.T) {
	cfg := effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas())
	sa, err := parseServiceAccount("apf-system/apf-operator")
	if err != nil {
		t.Fatal(err)
	}
	a := request.Attributes{User: sa.Username(), Groups: []string{"system:serviceaccounts", "system:authenticated"},
		Verb: "patch", APIGroup: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas", Name: "apf-x", ResourceRequest: true}
	e := ExplainWithOperator(cfg, &a, sa, "")
	if e.Native.FlowSchema != native.OperatorRouteName || e.Native.PriorityLevel != "workload-high" ||
		e.Native.Source != "Operator/apf-system/apf-operator" {
		t.Fatalf("native = %+v, want %s on workload-high", e.Native, native.OperatorRouteName)
	}
	var out bytes.Buffer
	if err := e.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if want := "the operator's own route for its service account apf-system/apf-operator"; !strings.Contains(out.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, out.String())
	}
	if e := Explain(cfg, &a, ""); e.Native.FlowSchema == native.OperatorRouteName {
		t.Errorf("without the operator's service account there is no route: %+v", e.Native)
	}
	a.User = "system:serviceaccount:apf-system:other"
	if e := ExplainWithOperator(cfg, &a, sa, ""); e.Native.FlowSchema == native.OperatorRouteName {
		t.Errorf("another service account must not take the route: %+v", e.Native)
	}
	for _, bad := range []string{"apf-operator", "Apf/x", "a/"} {
		if _, err := parseServiceAccount(bad); err == nil {
			t.Errorf("--operator-service-account %q must be refused", bad)
		}
	}
}
