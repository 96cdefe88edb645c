package e2e

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/envtestutil"

	demov1alpha1 "example.com/aggregated/apis/demo/v1alpha1"
)

// Names the test gives the sample server's Service and the aggregator's proxy client.
const (
	serviceName      = "demo-apiserver"
	serviceNamespace = "default"
	proxyClientName  = "front-proxy-client"
)

// pki are the certificates of the test: the front proxy's (request-header CA and the
// aggregator's client certificate) and the sample server's serving certificate.
type pki struct {
	dir              string
	frontProxyCA     *authority
	proxyClient      *keyPair
	servingCA        *authority
	serving          *keyPair
	frontProxyCAFile string
}

// newPKI makes the test's certificates in a temporary directory.
func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), frontProxyCA: newAuthority(t, "front-proxy-ca"), servingCA: newAuthority(t, "serving-ca")}
	p.frontProxyCAFile = p.frontProxyCA.writeCert(t, p.dir, "front-proxy-ca.crt")
	p.proxyClient = p.frontProxyCA.issueClient(t, p.dir, proxyClientName)
	// The aggregator's availability probe verifies the name <service>.<namespace>.svc; direct
	// clients use 127.0.0.1.
	p.serving = p.servingCA.issueServing(t, p.dir,
		[]string{serviceName + "." + serviceNamespace + ".svc", "localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	return p
}

// startControlPlane starts etcd and a kube-apiserver that trusts the front-proxy CA for
// X-Remote-* headers and proxies to aggregated servers with the proxy client certificate, and
// installs apf-operator's CRDs.
func startControlPlane(t *testing.T, certs *pki) *envtest.Environment {
	t.Helper()
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	env.ControlPlane.GetAPIServer().Configure().
		Set("requestheader-client-ca-file", certs.frontProxyCAFile).
		Set("requestheader-allowed-names", proxyClientName).
		Set("requestheader-username-headers", "X-Remote-User").
		Set("requestheader-group-headers", "X-Remote-Group").
		Set("requestheader-extra-headers-prefix", "X-Remote-Extra-").
		Set("proxy-client-cert-file", certs.proxyClient.certFile).
		Set("proxy-client-key-file", certs.proxyClient.keyFile)
	if _, err := env.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	return env
}

// writeKubeconfig writes cfg (client certificate credentials) as a kubeconfig file.
func writeKubeconfig(t *testing.T, cfg *rest.Config, dir string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// newClient returns a client for cfg that knows the core, RBAC and apf-operator types.
func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, flowv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// create creates every object, failing the test on the first error.
func create(ctx context.Context, t *testing.T, c client.Client, objects ...client.Object) {
	t.Helper()
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// tenantLevel is a RequestPriority with shares and one queue of queueLength requests.
func tenantLevel(name string, level, shares, queueLength int32) *flowv1.RequestPriority {
	return &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: level, AssuredConcurrencyShares: ptr.To(shares), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To(queueLength)}}
}

// userSchema is a FlowSchema sending user's requests to the RequestPriority of the same name.
func userSchema(user string, matchingPriority int32) *flowv1.FlowSchema {
	return &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: user}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: matchingPriority, RequestPriority: flowv1.RequestPriorityReference{Name: user},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{Field: "user", Value: user}}}}}}}
}

// widgetReaders lets users get and list widgets.
func widgetReaders(users ...string) []client.Object {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "widget-reader"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{demov1alpha1.GroupName}, Resources: []string{"widgets"}, Verbs: []string{"get", "list"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "widget-readers"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
	for _, u := range users {
		binding.Subjects = append(binding.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u})
	}
	return []client.Object{role, binding}
}

// registerAPIService makes kube-apiserver's aggregator proxy the demo group to 127.0.0.1:port
// through an ExternalName Service, verifying the sample server with the serving CA.
func registerAPIService(ctx context.Context, t *testing.T, c client.Client, port int, caBundle []byte) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: serviceNamespace},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1"}}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": demov1alpha1.SchemeGroupVersion.Version + "." + demov1alpha1.GroupName},
		"spec": map[string]any{
			"group": demov1alpha1.GroupName, "version": demov1alpha1.SchemeGroupVersion.Version,
			"service":              map[string]any{"namespace": serviceNamespace, "name": serviceName, "port": int64(port)},
			"caBundle":             caBundle,
			"groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
		}}}
	create(ctx, t, c, svc, apiService)
}

// waitAvailable waits until the aggregator reports the APIService Available.
func waitAvailable(ctx context.Context, t *testing.T, c client.Client, timeout time.Duration) {
	t.Helper()
	name := demov1alpha1.SchemeGroupVersion.Version + "." + demov1alpha1.GroupName
	var last string
	ok := poll(ctx, timeout, func() bool {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("apiregistration.k8s.io/v1")
		obj.SetKind("APIService")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			last = err.Error()
			return false
		}
		conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, cond := range conditions {
			m, _ := cond.(map[string]any)
			if m["type"] == "Available" {
				last = fmt.Sprint(m["status"], ": ", m["message"])
				return m["status"] == "True"
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("APIService %s not Available within %s; last: %s", name, timeout, last)
	}
}

// poll calls cond every 50 ms until it is true (true) or timeout passes (false).
func poll(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
	}
}

// portOf is the port of a listener's address.
func portOf(t *testing.T, l net.Listener) int {
	t.Helper()
	_, port, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
