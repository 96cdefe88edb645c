package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"
)

// testDebugEndpoints: the filter's debug endpoints answer a cluster admin (kube-apiserver's
// SubjectAccessReview allows system:masters) and are forbidden to an ordinary user, both
// authenticated by their client certificates and authorized by the server's delegated
// authorizer; the dump names the tenants' levels and explain names the schema of a request.
func testDebugEndpoints(t *testing.T, env *envtest.Environment, certs *pki, port int) {
	base := "https://127.0.0.1:" + strconv.Itoa(port) + apiserverfilter.DebugPathPrefix
	ordinary, err := env.AddUser(envtest.User{Name: "debug-ordinary"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	admin := direct(t, certs.servingCA.pem(), env.Config.CertData, env.Config.KeyData)
	nobody := direct(t, certs.servingCA.pem(), ordinary.Config().CertData, ordinary.Config().KeyData)

	levels, err := get(admin, base+apiserverfilter.DebugPriorityLevels, nil)
	if err != nil {
		t.Fatal(err)
	}
	if levels.status != http.StatusOK || !strings.Contains(string(levels.body), noisy) || !strings.Contains(string(levels.body), quiet) {
		t.Errorf("dump_priority_levels as admin: %d: %s; want 200 naming %s and %s", levels.status, levels.body, noisy, quiet)
	}
	explain, err := get(admin, base+apiserverfilter.DebugExplain+"?user="+quiet+"&path="+widgetsPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if explain.status != http.StatusOK || !strings.Contains(string(explain.body), `"flowSchema": "`+quiet+`"`) {
		t.Errorf("explain a list by %s as admin: %d: %s; want 200 naming FlowSchema %s", quiet, explain.status, explain.body, quiet)
	}
	denied, err := get(nobody, base+apiserverfilter.DebugPriorityLevels, nil)
	if err != nil {
		t.Fatal(err)
	}
	if denied.status != http.StatusForbidden {
		t.Errorf("dump_priority_levels as an ordinary user: %d: %s; want 403", denied.status, denied.body)
	}
}
