// Package exempt tests, with the real apf-operator binary against a real kube-apiserver
// (envtest), that exempt rights hold where kube-apiserver enforces them: the chart's
// ValidatingAdmissionPolicy apf-operator-exempt-rights (rendered with helm, as installed) asks
// the authorizer for the verb configure-exempt, and the projector sends a FlowSchema to the
// exempt level only with the record of exempt rights that the policy guards. Users are
// impersonated by the admin: "tenant" may write the operator's objects but has no
// configure-exempt; "boss" has it (the chart's exempt.users); "vip" sends the requests that
// boss's FlowSchema makes exempt. Which level serves a request is read from
// X-Kubernetes-PF-PriorityLevel-UID against the UID of kube-apiserver's exempt level.
package exempt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// The users of the tests.
const (
	tenant = "tenant"
	boss   = "boss"
	vip    = "vip"
)

// operatorNamespace is where the chart is rendered and the operator runs.
const operatorNamespace = "apf-system"

var suite = &harness.Suite{
	Name:           "exempt",
	ControlPlane:   &harness.ControlPlane{},
	NeedsBinary:    true,
	BeforeOperator: installPolicy,
}

func TestMain(m *testing.M) { harness.Main(m, suite) }

// installPolicy applies the chart's exempt-rights objects (the policy, its binding, the
// ClusterRole with the verb bound to boss) and the writers' RBAC, then waits until
// kube-apiserver enforces the policy.
func installPolicy(s *harness.Suite) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	manifests, err := chartExemptObjects()
	if err != nil {
		return err
	}
	manifests = harness.JoinYAML(manifests, writersRBAC)
	if _, stderr, err := s.Cluster.KubectlRun(ctx, strings.NewReader(manifests), "apply", "-f", "-"); err != nil {
		return fmt.Errorf("kubectl apply: %v\n%s", err, stderr)
	}
	for {
		err := asUser(s, tenant).Create(ctx, flowSchema("probe", "system-top", tenant, false), dryRun())
		if err != nil && strings.Contains(err.Error(), "configure-exempt") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the ValidatingAdmissionPolicy is not enforced after 2 minutes: last answer %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// chartExemptObjects renders the chart with boss in exempt.users and returns its
// ValidatingAdmissionPolicy, binding, and the ClusterRole and ClusterRoleBinding of the verb.
func chartExemptObjects() (string, error) {
	rendered, err := envtestutil.HelmTemplate(operatorNamespace, "exempt.users={"+boss+"}")
	if err != nil {
		return "", err
	}
	var picked []string
	for _, doc := range strings.Split(rendered, "\n---") {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return "", fmt.Errorf("helm template output: %w", err)
		}
		switch {
		case strings.HasPrefix(head.Kind, "ValidatingAdmissionPolicy"),
			strings.HasPrefix(head.Kind, "ClusterRole") && strings.HasSuffix(head.Metadata.Name, "-exempt"):
			picked = append(picked, strings.TrimPrefix(doc, "\n"))
		}
	}
	if len(picked) != 4 {
		return "", errors.New("the chart renders no ValidatingAdmissionPolicy, binding and exempt ClusterRole(Binding): " +
			fmt.Sprint(len(picked)) + " of 4 objects")
	}
	return strings.Join(picked, "\n---\n") + "\n", nil
}

// writersRBAC lets tenant and boss write the operator's objects and every user list
// ConfigMaps (the requests whose level the tests read); nobody here gets configure-exempt.
const writersRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: apf-writer}
rules:
- apiGroups: [flowcontrol.apf-operator.io]
  resources: [requestpriorities, flowschemas]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: apf-writer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: apf-writer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:authenticated"}
`
