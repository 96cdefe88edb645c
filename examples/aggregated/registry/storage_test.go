package registry

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	demov1alpha1 "example.com/aggregated/apis/demo/v1alpha1"
)

// in is a context for requests in namespace ns.
func in(ns string) context.Context {
	return genericapirequest.WithNamespace(context.Background(), ns)
}

// widget is a widget named name with labels.
func widget(name string, lbls map[string]string) *demov1alpha1.Widget {
	return &demov1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

// mustCreate creates w in ns.
func mustCreate(t *testing.T, s *Widgets, ns string, w *demov1alpha1.Widget) {
	t.Helper()
	if _, err := s.Create(in(ns), w, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestCreateGetList(t *testing.T) {
	s := NewWidgets(0)
	mustCreate(t, s, "a", widget("x", map[string]string{"color": "red"}))
	mustCreate(t, s, "a", widget("y", nil))
	mustCreate(t, s, "b", widget("x", nil))

	got, err := s.Get(in("a"), "x", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := got.(*demov1alpha1.Widget); w.Namespace != "a" || w.UID == "" || w.ResourceVersion != "1" {
		t.Errorf("got %s/%s uid %q rv %q, want a/x with a uid and resource version 1", w.Namespace, w.Name, w.UID, w.ResourceVersion)
	}
	if _, err := s.Get(in("b"), "y", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("getting b/y: %v, want NotFound", err)
	}
	checkList(t, s, "a", nil, "a/x", "a/y")
	checkList(t, s, "", nil, "a/x", "a/y", "b/x")
	checkList(t, s, "", labels.SelectorFromSet(labels.Set{"color": "red"}), "a/x")
}

// checkList lists ns with selector and compares the namespace/name keys.
func checkList(t *testing.T, s *Widgets, ns string, selector labels.Selector, want ...string) {
	t.Helper()
	obj, err := s.List(in(ns), &metainternalversion.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range obj.(*demov1alpha1.WidgetList).Items {
		got = append(got, w.Namespace+"/"+w.Name)
	}
	if len(got) != len(want) {
		t.Fatalf("list %q %v: got %v, want %v", ns, selector, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("list %q %v: got %v, want %v", ns, selector, got, want)
		}
	}
}

func TestCreateRejects(t *testing.T) {
	s := NewWidgets(0)
	mustCreate(t, s, "a", widget("x", nil))
	if _, err := s.Create(in("a"), widget("x", nil), nil, nil); !apierrors.IsAlreadyExists(err) {
		t.Errorf("duplicate: %v, want AlreadyExists", err)
	}
	if _, err := s.Create(in("a"), widget("", nil), nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("no name: %v, want BadRequest", err)
	}
	other := widget("z", nil)
	other.Namespace = "b"
	if _, err := s.Create(in("a"), other, nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("namespace mismatch: %v, want BadRequest", err)
	}
	deny := func(context.Context, runtime.Object) error {
		return apierrors.NewForbidden(demov1alpha1.Resource("widgets"), "z", nil)
	}
	if _, err := s.Create(in("a"), widget("z", nil), deny, nil); !apierrors.IsForbidden(err) {
		t.Errorf("failed validation: %v, want its Forbidden", err)
	}
	checkList(t, s, "a", nil, "a/x")
}

// TestListDelayEndsWithTheRequest checks that a slow list returns when the request ends
// instead of holding its seat for the whole delay.
func TestListDelayEndsWithTheRequest(t *testing.T) {
	s := NewWidgets(time.Hour)
	ctx, cancel := context.WithCancel(in("a"))
	cancel()
	if _, err := s.List(ctx, &metainternalversion.ListOptions{}); !apierrors.IsTimeout(err) {
		t.Errorf("list of a cancelled request: %v, want a Timeout error", err)
	}
}
