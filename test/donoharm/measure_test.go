package donoharm_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/rest"
)

// class is one traffic class of kube-apiserver's suggested configuration: an identity and a
// request that stands for its traffic.
type class struct {
	name   string
	user   string
	groups []string
	method string
	path   string
}

var (
	saGroups = func(ns string) []string {
		return []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	}
	nodeGroups = []string{"system:nodes", "system:authenticated"}
	authn      = []string{"system:authenticated"}
	leasePath  = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
)

// classes are the traffic classes the issue names, each with the suggested FlowSchema that
// serves it without the operator in the name.
var classes = []class{
	{"workload service account (service-accounts)", "system:serviceaccount:apps:controller", saGroups("apps"), http.MethodGet, "/api/v1/namespaces/apps/pods"},
	{"ordinary user (global-default)", "alice", authn, http.MethodGet, "/api/v1/namespaces/default/pods"},
	{"kube-system service account (kube-system-service-accounts)", "system:serviceaccount:kube-system:foo", saGroups("kube-system"), http.MethodGet, "/api/v1/namespaces/kube-system/pods"},
	{"node heartbeat (system-node-high)", "system:node:n1", nodeGroups, http.MethodGet, "/api/v1/nodes/n1"},
	{"node, other requests (system-nodes)", "system:node:n1", nodeGroups, http.MethodGet, "/api/v1/namespaces/default/pods"},
	{"kube-controller-manager", "system:kube-controller-manager", authn, http.MethodGet, "/api/v1/namespaces/default/pods"},
	{"kube-scheduler", "system:kube-scheduler", authn, http.MethodGet, "/api/v1/namespaces/default/pods"},
	{"leader election GET (system-leader-election)", "system:kube-scheduler", authn, http.MethodGet, leasePath},
	{"leader election PUT (system-leader-election)", "system:kube-scheduler", authn, http.MethodPut, leasePath},
}

// observation is where a class's request lands: the native level's name and nominal seats.
type observation struct {
	level string
	seats int
}

func (o observation) String() string { return fmt.Sprintf("%s %d", o.level, o.seats) }

// measurement is one observation per class, by class name.
type measurement map[string]observation

// measure sends each class's request once and reads its level and that level's seats.
func measure(ctx context.Context) (measurement, error) {
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := k8s.List(ctx, &plcs); err != nil {
		return nil, err
	}
	byUID := map[string]string{}
	for _, plc := range plcs.Items {
		byUID[string(plc.UID)] = plc.Name
	}
	seats, err := nominalSeats(ctx)
	if err != nil {
		return nil, err
	}
	out := measurement{}
	for _, c := range classes {
		uid, err := levelUID(ctx, c)
		if err != nil {
			return nil, err
		}
		name, ok := byUID[uid]
		if !ok {
			return nil, fmt.Errorf("%s: level UID %q is no PriorityLevelConfiguration (yet)", c.name, uid)
		}
		n, ok := seats[name]
		if !ok {
			return nil, fmt.Errorf("%s: no nominal seats metric for level %s (yet)", c.name, name)
		}
		out[c.name] = observation{level: name, seats: n}
	}
	return out, nil
}

// levelUID sends c's request through the admin, impersonating c's identity, and returns the
// priority level UID kube-apiserver classified it to (set even on an authorization 403).
func levelUID(ctx context.Context, c class) (string, error) {
	var body io.Reader
	if c.method == http.MethodPut {
		body = strings.NewReader(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-scheduler","namespace":"kube-system"}}`)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, baseURL+c.path, body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Impersonate-User", c.user)
	for _, g := range c.groups {
		req.Header.Add("Impersonate-Group", g)
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	uid := resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")
	if uid == "" {
		return "", fmt.Errorf("%s: HTTP %d without a priority level header", c.name, resp.StatusCode)
	}
	return uid, nil
}

var sharedClient *http.Client

func httpClient() *http.Client {
	if sharedClient == nil {
		c, err := rest.HTTPClientFor(admin)
		if err != nil {
			panic(err)
		}
		sharedClient = c
	}
	return sharedClient
}

// nominalSeats reads apiserver_flowcontrol_nominal_limit_seats by priority level from
// kube-apiserver's /metrics.
func nominalSeats(ctx context.Context) (map[string]int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	const prefix = `apiserver_flowcontrol_nominal_limit_seats{priority_level="`
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		rest := line[len(prefix):]
		end := strings.Index(rest, `"}`)
		if end < 0 {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[end+2:]), 64)
		if err != nil {
			return nil, fmt.Errorf("metric line %q: %w", line, err)
		}
		out[rest[:end]] = int(v)
	}
	return out, sc.Err()
}

// settle measures until three measurements in a row, 500 ms apart, agree and ready accepts
// them, and returns the last.
func settle(t *testing.T, what string, ready func(measurement) error) measurement {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	var last measurement
	same := 0
	for {
		m, err := measure(ctx)
		if err == nil {
			err = ready(m)
		}
		switch {
		case err != nil:
			same = 0
		case maps.Equal(last, m):
			same++
		default:
			same = 1
		}
		if err == nil {
			last = m
		}
		if same >= 3 {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: kube-apiserver did not settle in 2m: %v (last measurement %v)", what, err, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// table formats the phases' measurements, one row per class.
func table(phases []string, ms []measurement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| class | %s |\n|---|%s\n", strings.Join(phases, " | "), strings.Repeat("---|", len(phases)))
	names := make([]string, 0, len(classes))
	for _, c := range classes {
		names = append(names, c.name)
	}
	for _, n := range names {
		row := []string{n}
		for _, m := range ms {
			row = append(row, m[n].String())
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	return b.String()
}
