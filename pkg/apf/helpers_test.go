package apf_test

import (
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/pkg/apf"
)

// tinyFilter has one seat and one queue of length 1 at level "only"; FlowSchema "users" takes
// user u, FlowSchema "anonymous" takes system:anonymous.
func tinyFilter(t *testing.T, opts apf.Options) *apf.Filter {
	t.Helper()
	opts.ServerConcurrencyLimit = 1
	f, err := apf.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	rp := v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "only"}, Spec: v1alpha1.RequestPrioritySpec{
		PriorityLevel: 100, AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](1)}}
	f.Update([]v1alpha1.RequestPriority{rp}, []v1alpha1.FlowSchema{userSchema("users", "u"),
		userSchema("anonymous", apf.AnonymousUser)})
	return f
}

func userSchema(name, user string) v1alpha1.FlowSchema {
	return v1alpha1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority: 10, RequestPriority: v1alpha1.RequestPriorityReference{Name: "only"},
		Match: []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{
			{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldUser, Value: user}}}}}}}
}

// gate blocks each request until released.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 100), release: make(chan struct{})} }

func (g *gate) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	g.entered <- struct{}{}
	<-g.release
	w.WriteHeader(http.StatusOK)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
