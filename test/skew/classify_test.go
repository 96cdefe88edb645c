package skew_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// Response headers in which kube-apiserver names, by UID, the FlowSchema and the priority
// level that classified a request.
const (
	headerFlowSchemaUID    = "X-Kubernetes-PF-FlowSchema-UID"
	headerPriorityLevelUID = "X-Kubernetes-PF-PriorityLevel-UID"
)

// probe is a GET impersonating user, and the native FlowSchema and level that must classify it.
type probe struct {
	user, path        string
	flowSchema, level string
}

// probes are the requests checked on kube-apiserver cp: leader election by a kube-system
// service account, with a Lease (system-leader-election on every version) and with a
// ConfigMap (workload-leader-election up to 1.33, kube-system-service-accounts from 1.34); the
// provider's and the administrator's users (their schemas, ahead of the projection); the
// tenant's; anyone else (the tenant's catch-all, ahead of kube-apiserver's tail); and the
// operator (its route).
func probes(cp controlPlane) []probe {
	const controller = "system:serviceaccount:kube-system:some-controller"
	configmaps := "/api/v1/namespaces/default/configmaps"
	configMapLock := probe{controller, "/api/v1/namespaces/kube-system/configmaps/some-controller",
		"kube-system-service-accounts", "workload-high"}
	if cp.minor <= 33 {
		configMapLock.flowSchema, configMapLock.level = "workload-leader-election", "leader-election"
	}
	return []probe{
		{controller, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/some-controller",
			"system-leader-election", "leader-election"},
		configMapLock,
		{"eks:exempt-agent", configmaps, "eks-exempt", "exempt"},
		{"eks:controller", configmaps, "eks-workload-high", "workload-high"},
		{"platform:agent", configmaps, "platform-agents", "workload-high"},
		{"tenant-a", configmaps, native.NativeName("tenant-a"), native.NativeName("tenant")},
		{"someone-else", configmaps, native.NativeName("tenant-rest"), native.NativeName("tenant")},
		{"system:serviceaccount:apf-system:apf-operator", configmaps, native.OperatorRouteName, "workload-high"},
	}
}

// checkClassification sends every probe and waits until kube-apiserver classifies it as
// expected (it digests new native objects asynchronously).
func checkClassification(t *testing.T, e *env, cp controlPlane) {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(e.cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(e.cluster.Config.Host, "/")
	for _, p := range probes(cp) {
		harness.Eventually(t, waitTimeout, "classifying GET "+p.path+" as "+p.user, func() error {
			fs, level, err := classify(httpClient, base, p)
			if err != nil {
				return err
			}
			names, err := nativeNames(e)
			if err != nil {
				return err
			}
			if names[fs] != p.flowSchema || names[level] != p.level {
				return fmt.Errorf("classified by FlowSchema %q and level %q, want %s and %s", names[fs], names[level],
					p.flowSchema, p.level)
			}
			return nil
		})
	}
}

// classify sends the probe once and returns the UIDs in the classification headers.
func classify(c *http.Client, base string, p probe) (fsUID, levelUID string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+p.path, nil)
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Impersonate-User", p.user)
	resp, err := c.Do(req)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = resp.Body.Close() }()
	fsUID, levelUID = resp.Header.Get(headerFlowSchemaUID), resp.Header.Get(headerPriorityLevelUID)
	if fsUID == "" || levelUID == "" {
		return "", "", fmt.Errorf("HTTP %d without classification headers", resp.StatusCode)
	}
	return fsUID, levelUID, nil
}

// nativeNames maps the UID of every native FlowSchema and level on the server to its name.
func nativeNames(e *env) (map[string]string, error) {
	ctx := context.Background()
	out := map[string]string{}
	fss, err := e.cs.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, fs := range fss.Items {
		out[string(fs.UID)] = fs.Name
	}
	plcs, err := e.cs.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, l := range plcs.Items {
		out[string(l.UID)] = l.Name
	}
	return out, nil
}
