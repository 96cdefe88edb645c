package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MetricsReaderToken creates namespace, a service account name in it and a cluster role of the
// same name allowed to GET /metrics, bound to it, and returns a token of that service account
// valid for ttl: the operator's metrics endpoint authenticates and authorizes its scrapers as
// the chart serves it. cfg is an admin config.
func MetricsReaderToken(ctx context.Context, cfg *rest.Config, namespace, name string, ttl time.Duration) (string, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return "", err
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return "", fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl / time.Second))}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for %s: %w", name, err)
	}
	return tr.Status.Token, nil
}

// OperatorMetrics GETs the operator's /metrics at addr (HTTPS with Kubernetes authentication,
// as the chart serves it) with a bearer token, and returns the text exposition. The operator's
// serving certificate is self-signed: the token is what is checked here.
func OperatorMetrics(ctx context.Context, addr, token string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	httpClient := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test scraping its own child process
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /metrics: %s\n%s", resp.Status, body)
	}
	return body, err
}
