package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The flooding tenant is the recipe test/top and test/troubleshooting share: a user on a
// projected level of few seats who lists large ConfigMaps from many goroutines until
// kube-apiserver rejects his requests.

// tenantBlobBytes is the size of each tenant ConfigMap: large lists keep seats busy.
const tenantBlobBytes = 64 << 10

// RequestPriorityYAML returns the manifest of RequestPriority name with spec, a YAML flow
// mapping such as "{priorityLevel: 7000, assuredConcurrencyShares: 1, ...}".
func RequestPriorityYAML(name, spec string) string {
	return "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\n" +
		"metadata: {name: " + name + "}\nspec: " + spec + "\n"
}

// FlowSchemaYAML returns the manifest of FlowSchema name that sends the requests passing test
// (one atomic test, a YAML flow mapping such as "{equals: {field: user, value: bob}}") to
// RequestPriority level at matchingPriority.
func FlowSchemaYAML(name, level string, matchingPriority int, test string) string {
	return fmt.Sprintf(`apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: FlowSchema
metadata: {name: %s}
spec:
  matchingPriority: %d
  requestPriority: {name: %s}
  match:
  - and:
    - %s
`, name, matchingPriority, level, test)
}

// UserFlowSchemaYAML is FlowSchemaYAML for the requests of user.
func UserFlowSchemaYAML(name, level string, matchingPriority int, user string) string {
	return FlowSchemaYAML(name, level, matchingPriority, "{equals: {field: user, value: "+user+"}}")
}

// TenantNamespaceYAML returns the manifests of namespace ns holding configMaps ConfigMaps of
// 64 KiB (blob-00, blob-01, ...) and of the Role and RoleBinding that let user list them.
func TenantNamespaceYAML(ns, user string, configMaps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: list-configmaps, namespace: %[1]s}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: list-configmaps, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: list-configmaps}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %[2]s}]
`, ns, user)
	blob := strings.Repeat("x", tenantBlobBytes)
	for i := range configMaps {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: blob-%02d, namespace: %s}\ndata: {blob: %s}\n", i, ns, blob)
	}
	return b.String()
}

// JoinYAML joins manifests into one multi-document stream.
func JoinYAML(manifests ...string) string { return strings.Join(manifests, "---\n") }

// ApplyProjected applies manifests with kubectl and waits, up to 2 minutes, until every object
// named (kubectl's resource/name, such as "requestpriorities.flowcontrol.apf-operator.io/tiny")
// is Projected; it fails t otherwise, with every RequestPriority's and FlowSchema's conditions.
func (c *Cluster) ApplyProjected(ctx context.Context, t testing.TB, manifests string, objects ...string) {
	t.Helper()
	if _, stderr, err := c.KubectlRun(ctx, strings.NewReader(manifests), "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, stderr)
	}
	args := append([]string{"wait", "--for=condition=Projected", "--timeout=120s"}, objects...)
	if _, stderr, err := c.KubectlRun(ctx, nil, args...); err != nil {
		status, _, _ := c.KubectlRun(ctx, nil, "get", "requestpriorities.flowcontrol.apf-operator.io,flowschemas.flowcontrol.apf-operator.io",
			"-o", `jsonpath={range .items[*]}{.kind}/{.metadata.name}: {.status.conditions}{"\n"}{end}`)
		t.Fatalf("kubectl wait: %v\n%s\n%s", err, stderr, status)
	}
}

// DeleteOnCleanup deletes the named objects (kubectl's resource/name) when t ends, so that
// the next test on the same control plane starts without them.
func (c *Cluster) DeleteOnCleanup(t testing.TB, objects ...string) {
	t.Cleanup(func() {
		args := append([]string{"delete", "--ignore-not-found", "--wait=true"}, objects...)
		if _, stderr, err := c.KubectlRun(context.Background(), nil, args...); err != nil {
			t.Errorf("kubectl delete: %v\n%s", err, stderr)
		}
	})
}
