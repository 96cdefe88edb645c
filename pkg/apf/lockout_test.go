package apf_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/pkg/apf"
)

// lockOutFilter has one seat and a one-request queue at level "one-seat", and FlowSchema
// "grab-all" at matchingPriority 0 matching every request there.
func lockOutFilter(t *testing.T) *apf.Filter {
	t.Helper()
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	rp := v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "one-seat"}, Spec: v1alpha1.RequestPrioritySpec{
		PriorityLevel: 100, AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](1)}}
	grab := v1alpha1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "grab-all"}, Spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority: 0, RequestPriority: v1alpha1.RequestPriorityReference{Name: "one-seat"},
		Match: []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{}}}}}
	f.Update([]v1alpha1.RequestPriority{rp}, []v1alpha1.FlowSchema{grab})
	return f
}

// TestFilterNoLockOut fills the one-seat level every request goes to: other users get 429,
// while system:masters still runs at once, classified by the implicit schema system-top at the
// exempt level, as the headers, Explain and the debug endpoint say.
func TestFilterNoLockOut(t *testing.T) {
	f := lockOutFilter(t)
	g := newGate()
	h := f.Handler(g)
	req := func(user string, groups ...string) *http.Request {
		r := httptest.NewRequest("DELETE", "/apis/flowcontrol.apf-operator.io/v1alpha1/flowschemas/grab-all", nil)
		return r.WithContext(apf.WithUser(r.Context(), user, groups))
	}
	var wg sync.WaitGroup
	for i, user := range []string{"alice", "bob"} {
		wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), req(user)) })
		if i == 0 {
			<-g.entered
		}
	}
	waitFor(t, "the second request to queue", func() bool { return strings.Contains(debugState(t, f), `"waiting": 1`) })
	rejected := httptest.NewRecorder()
	h.ServeHTTP(rejected, req("carol"))
	if rejected.Code != http.StatusTooManyRequests || rejected.Header().Get(apf.HeaderFlowSchema) != "grab-all" {
		t.Fatalf("another user: %d at %q; want 429 at grab-all (the trap works)", rejected.Code, rejected.Header().Get(apf.HeaderFlowSchema))
	}

	admin := httptest.NewRecorder()
	admitted := make(chan struct{})
	go func() {
		defer close(admitted)
		f.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })).
			ServeHTTP(admin, req("admin", "system:masters"))
	}()
	<-admitted // the level stays full: only an exempt request gets through
	if admin.Code != http.StatusNoContent || admin.Header().Get(apf.HeaderFlowSchema) != "system-top" ||
		admin.Header().Get(apf.HeaderRequestPriority) != "system-top" {
		t.Errorf("system:masters: %d at %q/%q; want 204 at system-top/system-top", admin.Code,
			admin.Header().Get(apf.HeaderFlowSchema), admin.Header().Get(apf.HeaderRequestPriority))
	}
	close(g.release)
	wg.Wait()

	got := f.Explain(apf.Attributes{User: "admin", Groups: []string{"system:masters"}, Verb: "delete",
		APIGroup: "flowcontrol.apf-operator.io", Resource: "flowschemas", Name: "grab-all", ResourceRequest: true})
	want := apf.Classification{FlowSchema: "system-top", Backstop: true, RequestPriority: "system-top", Width: 2, Exempt: true}
	if got != want {
		t.Errorf("Explain(system:masters) = %+v; want %+v", got, want)
	}
	var st struct {
		FlowSchemas []struct {
			Name            string `json:"name"`
			RequestPriority string `json:"requestPriority"`
			Backstop        bool   `json:"backstop"`
		} `json:"flowSchemas"`
	}
	if err := json.Unmarshal([]byte(debugState(t, f)), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.FlowSchemas) == 0 || st.FlowSchemas[0].Name != "system-top" || !st.FlowSchemas[0].Backstop {
		t.Errorf("debug flowSchemas %+v; want the implicit system-top first, ahead of grab-all", st.FlowSchemas)
	}
}
