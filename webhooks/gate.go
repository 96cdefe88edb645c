package webhooks

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Flood limits of the webhook server, shared by every webhook it serves (Gate). A caller that
// floods the admission path (any pod that reaches the port, when neither the client-CA check
// nor the NetworkPolicy is on) gets quick refusals, and the operator's memory stays bounded by
// MaxConcurrentAdmissions × what one admission may hold.
const (
	// MaxConcurrentAdmissions is how many admission requests the server handles at once. One
	// admission holds at most MaxAdmissionBodyBytes of review and its decoding (a FlowSchema of
	// 1 MiB of short set values decodes to a few tens of MiB at worst), so eight stay well
	// within the chart's 512 MiB memory limit; validation takes milliseconds, so eight keep
	// up with any configuration write rate on the chart's 500m CPU limit.
	MaxConcurrentAdmissions = 8
	// MaxAdmissionBodyBytes caps an AdmissionReview body: an object and an oldObject of at most
	// MaxFlowSchemaBytes each, and the request's other fields.
	MaxAdmissionBodyBytes = 2*MaxFlowSchemaBytes + 256<<10
	// admissionReadTimeout bounds reading one review: a caller that sends its body slowly
	// frees its slot after it. kube-apiserver sends the body at once.
	admissionReadTimeout = 5 * time.Second
	// admissionWriteTimeout bounds writing one response, for a caller that reads it slowly.
	admissionWriteTimeout = 10 * time.Second
	// retryAfterSeconds is the Retry-After of a refusal for lack of a slot.
	retryAfterSeconds = 1
	// maxDrainBytes is how much of a body the gate reads and discards (no memory kept) after
	// refusing it, so that the caller, still sending, can read the answer; past it, or past
	// the read deadline, the connection is closed instead.
	maxDrainBytes = 16 << 20
)

// Gate returns controller-runtime's webhook server for opts with every handler registered on
// it behind one shared limit of MaxConcurrentAdmissions concurrent requests (see gate).
func Gate(opts webhook.Options) webhook.Server {
	if opts.WebhookMux == nil {
		opts.WebhookMux = http.NewServeMux()
	}
	return &gatedServer{Server: webhook.NewServer(opts), mux: opts.WebhookMux,
		slots: make(chan struct{}, MaxConcurrentAdmissions)}
}

// gatedServer registers each webhook behind the shared slots.
type gatedServer struct {
	webhook.Server
	// mux is the server's mux, set at construction and never written after (see WebhookMux).
	mux   *http.ServeMux
	slots chan struct{}
}

// WebhookMux implements webhook.Server. controller-runtime's DefaultServer returns a field
// that its Start sets, unlocked, on first use; the webhooks registered on a running manager
// (after the certificate rotation) make the manager start the server while the webhook
// builder reads WebhookMux, a data race. The mux given at construction is the same one and
// is never written after.
func (s *gatedServer) WebhookMux() *http.ServeMux { return s.mux }

// Register implements webhook.Server.
func (s *gatedServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, &gate{slots: s.slots, next: hook})
}

// gate admits a request to next only with a free slot, and a body of at most
// MaxAdmissionBodyBytes read within admissionReadTimeout. Everything else is answered at once,
// before the body is read:
//   - no free slot: HTTP 429 with Retry-After. kube-apiserver's webhook client retries after
//     it within the webhook's timeout, then applies the failurePolicy: the validating webhooks
//     (Fail) refuse the write, which the client retries (fail closed: no unchecked
//     configuration); the events webhook (Ignore) lets the event through unlimited (an
//     overloaded operator never blocks event writes, as when it is down);
//   - a declared body over the cap: HTTP 413, refused the same way.
//
// A refused or cut body is drained (see drain), so that the caller reads the answer.
type gate struct {
	slots chan struct{}
	next  http.Handler
	// readTimeout replaces admissionReadTimeout when positive (tests).
	readTimeout time.Duration
}

// ServeHTTP implements http.Handler.
func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	now := time.Now()
	_ = rc.SetReadDeadline(now.Add(cmp.Or(g.readTimeout, admissionReadTimeout)))
	_ = rc.SetWriteDeadline(now.Add(admissionWriteTimeout))
	body := r.Body
	defer drain(rc, body)
	if r.ContentLength > MaxAdmissionBodyBytes {
		http.Error(w, fmt.Sprintf("admission review of %d bytes; the operator reads at most %d (an object and an "+
			"oldObject of at most %d each)", r.ContentLength, MaxAdmissionBodyBytes, MaxFlowSchemaBytes),
			http.StatusRequestEntityTooLarge)
		return
	}
	select {
	case g.slots <- struct{}{}:
	default:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		http.Error(w, fmt.Sprintf("too many concurrent admission requests (the operator handles %d at once); retry",
			MaxConcurrentAdmissions), http.StatusTooManyRequests)
		return
	}
	defer func() { <-g.slots }()
	// The handler may close its body; the original stays open for drain, so that the server
	// does not cut the connection while the caller is still sending.
	r.Body = io.NopCloser(http.MaxBytesReader(w, body, MaxAdmissionBodyBytes))
	g.next.ServeHTTP(w, r)
}

// drain sends the answer, then reads and discards what is left of the body, at most
// maxDrainBytes within the read deadline, so that a caller still sending gets to read the
// answer instead of a reset connection.
func drain(rc *http.ResponseController, body io.Reader) {
	_ = rc.Flush()
	_, _ = io.CopyN(io.Discard, body, maxDrainBytes)
}
