package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/harness"
)

const (
	demoDuration  = 8 * time.Second
	demoHeavy     = 360
	demoLightRate = 30
	// demoSchema is the sample FlowSchema; the operator projects it onto kube-apiserver.
	demoSchema = "tenant-workloads"
)

// demoAPIServerFlags give the demo's kube-apiserver 6 seats in all, so that a few hundred
// requests in flight overload it: its own flow control then queues and rejects them.
var demoAPIServerFlags = map[string]string{"max-requests-inflight": "4", "max-mutating-requests-inflight": "2"}

// overload drives one heavy tenant and four light ones at kube-apiserver itself, as members of
// group "tenants" (impersonated by the admin): the sample FlowSchema tenant-workloads sends
// them, one flow per namespace, to the sample level. What queues and rejects them is
// kube-apiserver's own API Priority and Fairness, enforcing the native objects the operator
// projected; no filter of ours is in the path.
func overload(ctx context.Context, cluster *harness.Cluster, k8s client.Client) error {
	nativeName, uid, err := projectedSchema(ctx, k8s)
	if err != nil {
		return err
	}
	fmt.Printf("FlowSchema %s is projected onto kube-apiserver's native FlowSchema %s (uid %s).\n", demoSchema, nativeName, uid)
	if err := grantTenants(ctx, k8s); err != nil {
		return err
	}
	transport, err := rest.TransportFor(cluster.Config)
	if err != nil {
		return err
	}
	fmt.Printf("kube-apiserver has %s+%s seats. tenant-red keeps %d LIST pods requests in flight; tenant-blue,\n",
		demoAPIServerFlags["max-requests-inflight"], demoAPIServerFlags["max-mutating-requests-inflight"], demoHeavy)
	fmt.Printf("-green, -gold and -pink each send %d per second, each in its own namespace, for %s.\n\n", demoLightRate, demoDuration)
	before, err := rejectedTotal(ctx, cluster, nativeName)
	if err != nil {
		return err
	}
	results := harness.RunOverloadOn(ctx, harness.Target{BaseURL: baseURL(cluster), Transport: transport, Impersonate: true},
		demoClients(), demoDuration)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	after, err := rejectedTotal(ctx, cluster, nativeName)
	if err != nil {
		return err
	}
	return printResults(results, uid, nativeName, after-before)
}

// baseURL is kube-apiserver's URL without a trailing slash.
func baseURL(cluster *harness.Cluster) string {
	u := strings.TrimSuffix(cluster.Config.Host, "/")
	if !strings.Contains(u, "://") {
		u = "https://" + u
	}
	return u
}

func demoClients() []harness.Client {
	tenants := []string{"tenants"}
	clients := []harness.Client{{Name: "tenant-red (heavy)", User: "tenant-red-ci", Groups: tenants,
		Namespace: "tenant-red-prod", Concurrency: demoHeavy}}
	for _, c := range []string{"blue", "green", "gold", "pink"} {
		clients = append(clients, harness.Client{Name: "tenant-" + c, User: "tenant-" + c + "-ci", Groups: tenants,
			Namespace: "tenant-" + c + "-prod", Rate: demoLightRate})
	}
	return clients
}

// projectedSchema waits for the sample FlowSchema's Projected condition and returns its native
// FlowSchema's name and uid.
func projectedSchema(ctx context.Context, k8s client.Client) (string, string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var fs flowv1.FlowSchema
		if err := k8s.Get(ctx, client.ObjectKey{Name: demoSchema}, &fs); err != nil {
			return "", "", err
		}
		if fs.Status.NativeName != "" {
			var n flowcontrolv1.FlowSchema
			if err := k8s.Get(ctx, client.ObjectKey{Name: fs.Status.NativeName}, &n); err != nil {
				return "", "", err
			}
			return n.Name, string(n.UID), nil
		}
		if time.Now().After(deadline) {
			return "", "", fmt.Errorf("FlowSchema %s not projected after 30s: %+v", demoSchema, fs.Status.Conditions)
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// grantTenants creates the tenants' namespaces and lets group "tenants" list pods, so that
// their requests are served (200) when kube-apiserver's flow control admits them.
func grantTenants(ctx context.Context, k8s client.Client) error {
	objs := []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "demo-tenants"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "demo-tenants"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "demo-tenants"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "tenants"}}},
	}
	for _, c := range demoClients() {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Namespace}})
	}
	for _, obj := range objs {
		if err := k8s.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// rejectedTotal reads kube-apiserver's apiserver_flowcontrol_rejected_requests_total for the
// native level of the sample (the projected level has the same name as the projected schema).
func rejectedTotal(ctx context.Context, cluster *harness.Cluster, level string) (float64, error) {
	c, err := rest.HTTPClientFor(cluster.Config)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL(cluster)+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "apiserver_flowcontrol_rejected_requests_total{") &&
			strings.Contains(line, `priority_level="`+level+`"`) {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, err
			}
			sum += v
		}
	}
	return sum, scanner.Err()
}

func printResults(results []harness.ClientResult, uid, nativeName string, rejectedByServer float64) error {
	fmt.Printf("%-20s %6s %7s %9s %8s  %s\n", "client", "sent", "served", "rejected", "p99", "native FlowSchema")
	fmt.Println(strings.Repeat("-", 80))
	var problems []string
	for i, r := range results {
		schema := r.FlowSchema
		if schema == uid {
			schema = nativeName
		}
		fmt.Printf("%-20s %6d %7d %9d %8s  %s\n", r.Name, r.Sent, r.Served, r.Rejected,
			r.Percentile(0.99).Round(time.Millisecond), schema)
		if schema != nativeName {
			problems = append(problems, fmt.Sprintf("%s was classified by %q, not %s", r.Name, schema, nativeName))
		}
		if r.Other > 0 {
			problems = append(problems, fmt.Sprintf("%s: %d responses with status %d", r.Name, r.Other, r.OtherStatus))
		}
		if i > 0 && (r.Rejected > 0 || r.Served != r.Sent) {
			problems = append(problems, fmt.Sprintf("%s: sent %d, served %d, rejected %d", r.Name, r.Sent, r.Served, r.Rejected))
		}
	}
	fmt.Printf("\nkube-apiserver's apiserver_flowcontrol_rejected_requests_total{priority_level=%q} rose by %.0f.\n",
		nativeName, rejectedByServer)
	if results[0].Rejected == 0 || rejectedByServer < float64(results[0].Rejected) {
		problems = append(problems, fmt.Sprintf("the heavy tenant got %d 429s and kube-apiserver counted %.0f rejections",
			results[0].Rejected, rejectedByServer))
	}
	if len(problems) > 0 {
		return errors.New("kube-apiserver's fair queuing did not hold: " + strings.Join(problems, "; "))
	}
	fmt.Println("Every light tenant was served in full with no 429; the heavy tenant's surplus was rejected by")
	fmt.Println("kube-apiserver itself with 429 and Retry-After, from the level the operator projected.")
	return nil
}
