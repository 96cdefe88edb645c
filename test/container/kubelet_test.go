package container

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// The test plays the parts of the kubelet and of kube-controller-manager's endpoint-slice
// controller, which envtest does not run: it gives the container its service-account token,
// keeps its Secret volume current, and publishes its address behind the webhook Service.

// serviceAccountToken requests a token for the pod's ServiceAccount (the TokenRequest API,
// which the kubelet uses) and writes what the kubelet mounts at ServiceAccountMountPath: token,
// ca.crt and namespace, readable by the container's non-root user.
func (c *cluster) serviceAccountToken(t *testing.T, ctx context.Context, account string) (dir, token string) {
	t.Helper()
	tr, err := c.kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, account, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for ServiceAccount %s/%s: %v", namespace, account, err)
	}
	dir = readableDir(t, "serviceaccount")
	for name, data := range map[string][]byte{
		"token": []byte(tr.Status.Token), "ca.crt": c.cfg.CAData, "namespace": []byte(namespace),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, tr.Status.Token
}

// readableDir makes a directory the container's user can read once mounted (t.TempDir's are
// private to root).
func readableDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tokenClient is a client with the container's credentials: what the chart's RBAC grants it.
func (c *cluster) tokenClient(token string) *kubernetes.Clientset {
	cfg := &rest.Config{Host: c.cfg.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: c.cfg.CAData}}
	return kubernetes.NewForConfigOrDie(cfg)
}

// syncSecret copies the Secret's keys into dir as files until ctx ends, as the kubelet keeps a
// Secret volume current: the operator's certificate rotation writes the webhook certificate to
// the Secret, and the webhook server reads it from the mounted directory. A file is replaced by
// a rename, so the container never reads half of one.
func (c *cluster) syncSecret(ctx context.Context, t *testing.T, name, dir string) {
	for {
		s, err := c.kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			for key, data := range s.Data {
				if err := writeIfChanged(filepath.Join(dir, key), data); err != nil {
					t.Errorf("writing Secret %s's key %s: %v", name, key, err)
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// publishEndpoint writes the EndpointSlice the endpoint-slice controller would write for the
// webhook Service once the pod is ready: the container's address and the port its targetPort
// names. The Service keeps the chart's selector; nothing else writes slices here.
func (c *cluster) publishEndpoint(t *testing.T, ctx context.Context, svc *corev1.Service, ip string, containerPort func(intstr.IntOrString) int32) {
	t.Helper()
	var ports []discoveryv1.EndpointPort
	for _, p := range svc.Spec.Ports {
		ports = append(ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Protocol: ptr.To(p.Protocol), Port: ptr.To(containerPort(p.TargetPort))})
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name + "-podman", Namespace: svc.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "container-test"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       ports,
	}
	if _, err := c.kube.DiscoveryV1().EndpointSlices(svc.Namespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("EndpointSlice for Service %s: %v", svc.Name, err)
	}
}
