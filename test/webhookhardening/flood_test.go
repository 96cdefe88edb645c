package webhookhardening

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/webhooks"
)

// floodCallers is how many adversarial admissions TestFlood sends at once.
const floodCallers = 200

// floodKind is one kind of adversarial admission.
type floodKind int

const (
	largeObject    floodKind = iota // a FlowSchema just under the 1 MiB cap, of short set values (slowest to decode)
	largeOldObject                  // an update whose object and oldObject are both just under the cap
	oversized                       // a review of 5 MiB sent without a length (chunked): cut at the body cap
	slowCaller                      // half a review, then silence
	floodKinds
)

func (k floodKind) String() string {
	return [...]string{"large object", "large oldObject", "oversized chunked", "slow caller"}[k]
}

// TestFlood: 200 concurrent adversarial admissions straight to the operator's FlowSchema
// webhook, by callers holding a client certificate the operator trusts (the worst case: the
// client-CA check lets them in). Every request is answered (admitted, refused, or refused for
// lack of a slot with 429), the operator keeps running, and its peak RSS (VmHWM) stays below
// the chart's memory limit. Callers refused with 429 retry twice after Retry-After, as
// kube-apiserver's webhook client does.
func TestFlood(t *testing.T) {
	limit := chartMemoryLimit(t)
	defer close(testEnd)
	before, err := peakRSS(operator.PID())
	if err != nil {
		t.Fatal(err)
	}
	bodies := floodBodies(t)
	client := floodClient(t)
	defer client.CloseIdleConnections()

	statuses := make([]string, floodCallers)
	errs := make([]error, floodCallers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range floodCallers {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			statuses[i], errs[i] = floodCall(client, floodKind(i%int(floodKinds)), bodies)
		}()
	}
	start.Done()
	done.Wait()

	counts := map[string]int{}
	for i := range floodCallers {
		kind := floodKind(i % int(floodKinds))
		if errs[i] != nil {
			t.Errorf("caller %d (%s) got no answer: %v", i, kind, errs[i])
			continue
		}
		counts[fmt.Sprintf("%s: %s", kind, statuses[i])]++
	}
	if exited, exitErr := operator.Exited(); exited {
		t.Fatalf("the operator exited during the flood (%v):\n%s", exitErr, operator.ReadLog())
	}
	peak, err := peakRSS(operator.PID())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d callers answered: %v; operator peak RSS (VmHWM) %d MiB before the flood, %d MiB after; chart limit %d MiB",
		floodCallers, counts, before>>20, peak>>20, limit>>20)
	if peak >= limit {
		t.Errorf("peak RSS %d MiB reached the chart's memory limit %d MiB", peak>>20, limit>>20)
	}
	if _, err := review(webhookAddr, apiServerCert, apiServerKey, "u"); err != nil {
		t.Errorf("after the flood the webhook no longer serves: %v", err)
	}
}

// floodCall sends one adversarial admission and returns its answer: "admitted", "denied" (an
// AdmissionReview that refuses) or "HTTP <status>"; a 429 is retried twice after its
// Retry-After.
func floodCall(c *http.Client, kind floodKind, bodies map[floodKind][]byte) (string, error) {
	for attempt := 0; ; attempt++ {
		answer, retryAfter, err := floodOnce(c, kind, bodies[kind])
		if err != nil || retryAfter == 0 || attempt == 2 {
			return answer, err
		}
		time.Sleep(retryAfter)
	}
}

// floodOnce sends one admission; retryAfter is set on a 429 only.
func floodOnce(c *http.Client, kind floodKind, body []byte) (answer string, retryAfter time.Duration, err error) {
	var r io.Reader = bytes.NewReader(body)
	length := int64(len(body))
	switch kind {
	case oversized:
		r, length = io.MultiReader(bytes.NewReader(body), bytes.NewReader(make([]byte, 5<<20))), -1
	case slowCaller:
		r = io.MultiReader(bytes.NewReader(body[:len(body)/2]), stalled{end: testEnd})
	}
	req, err := http.NewRequest(http.MethodPost, "https://"+webhookAddr+webhooks.FlowSchemaPath, r)
	if err != nil {
		return "", 0, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", 0, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(raw, &review); err != nil || review.Response == nil {
			return "", 0, fmt.Errorf("HTTP 200 without an AdmissionReview response (%v): %.200s", err, raw)
		}
		if review.Response.Allowed {
			return "admitted", 0, nil
		}
		return "denied", 0, nil
	case http.StatusTooManyRequests:
		seconds, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return "HTTP 429", time.Duration(max(seconds, 1)) * time.Second, nil
	}
	return fmt.Sprintf("HTTP %d", resp.StatusCode), 0, nil
}

// stalled is a body that sends nothing more until the test ends.
type stalled struct{ end <-chan struct{} }

func (s stalled) Read([]byte) (int, error) {
	<-s.end
	return 0, io.EOF
}

// testEnd is closed when TestFlood returns, which ends the slow callers' bodies.
var testEnd = make(chan struct{})

// floodClient calls the webhook with kube-apiserver's client certificate; its timeout is far
// above the server's read deadline, so a slow caller learns the server's answer.
func floodClient(t *testing.T) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cluster.Env.WebhookInstallOptions.LocalServingCAData) {
		t.Fatal("envtest's webhook serving CA does not parse")
	}
	pair, err := tls.X509KeyPair(apiServerCert, apiServerKey)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 45 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 0,
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12,
			Certificates: []tls.Certificate{pair}}}}
}

// floodBodies are the reviews of each kind (the oversized and slow ones reuse the large one).
func floodBodies(t *testing.T) map[floodKind][]byte {
	t.Helper()
	object := bigFlowSchema(webhooks.MaxFlowSchemaBytes - 4<<10)
	create := admissionReview(t, admissionv1.Create, object, nil)
	update := admissionReview(t, admissionv1.Update, object, object)
	return map[floodKind][]byte{largeObject: create, largeOldObject: update, oversized: create, slowCaller: create}
}

// bigFlowSchema is a FlowSchema of about size bytes of JSON: conjunctions of inSet tests on
// user with short values, the most allocations per byte to decode.
func bigFlowSchema(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"flowcontrol.apf-operator.io/v1alpha1","kind":"FlowSchema","metadata":{"name":"flood"},` +
		`"spec":{"matchingPriority":100,"requestPriority":{"name":"flood"},"match":[`)
	for c := 0; b.Len() < size-4096; c++ {
		if c > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"and":[`)
		for a := 0; a < 32 && b.Len() < size-4096; a++ {
			if a > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"inSet":{"field":"user","set":[`)
			for v := 0; v < 256; v++ {
				if v > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"%x"`, v)
			}
			b.WriteString(`]}}`)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

func admissionReview(t *testing.T, op admissionv1.Operation, object, old []byte) []byte {
	t.Helper()
	req := &admissionv1.AdmissionRequest{UID: "flood", Operation: op, Name: "flood",
		Kind:     metav1.GroupVersionKind{Group: "flowcontrol.apf-operator.io", Version: "v1alpha1", Kind: "FlowSchema"},
		Resource: metav1.GroupVersionResource{Group: "flowcontrol.apf-operator.io", Version: "v1alpha1", Resource: "flowschemas"},
		UserInfo: authenticationv1.UserInfo{Username: "flooder"}}
	req.Object.Raw = object
	req.OldObject.Raw = old
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// chartMemoryLimit is the operator container's memory limit in the chart's values.
func chartMemoryLimit(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "charts", "apf-operator", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Resources struct {
			Limits struct {
				Memory string `json:"memory"`
			} `json:"limits"`
		} `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	q, err := resource.ParseQuantity(values.Resources.Limits.Memory)
	if err != nil {
		t.Fatalf("the chart's resources.limits.memory %q: %v", values.Resources.Limits.Memory, err)
	}
	return q.Value()
}

// peakRSS is the process's peak resident set size (VmHWM), in bytes.
func peakRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kib << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
