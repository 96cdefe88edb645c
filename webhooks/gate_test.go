package webhooks

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestGateRefusesPastTheLimit: with every slot held by a request that blocks, the next request
// is answered at once with 429 and Retry-After, its body unread; a freed slot serves again.
func TestGateRefusesPastTheLimit(t *testing.T) {
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(MaxConcurrentAdmissions)
	blocking := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("block") != "" {
			entered.Done()
			<-release
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})
	g := &gate{slots: make(chan struct{}, MaxConcurrentAdmissions), next: blocking}
	var held sync.WaitGroup
	for i := 0; i < MaxConcurrentAdmissions; i++ {
		held.Add(1)
		go func() {
			defer held.Done()
			g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/x?block=1", strings.NewReader("{}")))
		}()
	}
	entered.Wait()
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", strings.NewReader("{}")))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" ||
		!strings.Contains(rec.Body.String(), "handles 8 at once") {
		t.Fatalf("past the limit: %d %q %q; want 429 with Retry-After 1", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	close(release)
	held.Wait()
	rec = httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", strings.NewReader("{}")))
	if rec.Code != http.StatusOK {
		t.Fatalf("with free slots: %d; want 200", rec.Code)
	}
}

// TestGateCapsTheBody: a declared body over the cap is refused unread; an undeclared one is
// cut at the cap (the handler's read fails).
func TestGateCapsTheBody(t *testing.T) {
	var readErr error
	g := &gate{slots: make(chan struct{}, 1), next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, readErr = io.Copy(io.Discard, r.Body)
	})}
	req := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader("{}"))
	req.ContentLength = MaxAdmissionBodyBytes + 1
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || readErr != nil {
		t.Fatalf("declared oversize body: %d; want 413 before the handler", rec.Code)
	}
	req = httptest.NewRequest(http.MethodPost, "/x", io.LimitReader(zeros{}, MaxAdmissionBodyBytes+1))
	req.ContentLength = -1
	g.ServeHTTP(httptest.NewRecorder(), req)
	if readErr == nil || !strings.Contains(readErr.Error(), "too large") {
		t.Fatalf("undeclared oversize body: read error %v; want the cap's", readErr)
	}
}

// TestGateDropsASlowCaller: a caller that sends part of its body and stalls gets its read
// failed at the read deadline (the handler then returns and frees the slot). The deadline is
// shortened from admissionReadTimeout: the caller stalls for good, so any deadline shows it.
func TestGateDropsASlowCaller(t *testing.T) {
	readErrs := make(chan error, 1)
	g := &gate{slots: make(chan struct{}, 1), readTimeout: 200 * time.Millisecond,
		next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := io.Copy(io.Discard, r.Body)
			readErrs <- err
		})}
	srv := httptest.NewServer(g)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := io.WriteString(conn, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":"); err != nil {
		t.Fatal(err)
	}
	if err := <-readErrs; err == nil {
		t.Fatal("a stalled body was read to its end; want the read deadline to fail it")
	}
}

// zeros reads zero bytes forever.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestSizeLimitCapsOldObject: a stored FlowSchema over the cap (kept while no webhook checked
// it) is refused undecoded on update, with the fix; a small one reaches the validator.
func TestSizeLimitCapsOldObject(t *testing.T) {
	reached := 0
	s := sizeLimit{limit: 10, kind: "FlowSchema", next: admission.HandlerFunc(
		func(context.Context, admission.Request) admission.Response { reached++; return admission.Allowed("") })}
	req := func(object, old int) admission.Request {
		var r admission.Request
		r.Name = "big"
		r.Object.Raw, r.OldObject.Raw = make([]byte, object), make([]byte, old)
		return r
	}
	resp := s.Handle(context.Background(), req(5, 11))
	if resp.Allowed || resp.Result.Code != http.StatusRequestEntityTooLarge ||
		!strings.Contains(resp.Result.Message, "the stored FlowSchema \"big\" (oldObject) is 11 bytes") || reached != 0 {
		t.Fatalf("oversized oldObject: %+v (validator reached %d times); want 413 naming it", resp.Result, reached)
	}
	if resp := s.Handle(context.Background(), req(5, 10)); !resp.Allowed || reached != 1 {
		t.Fatalf("within the cap: %+v; want the validator's answer", resp.Result)
	}
}
