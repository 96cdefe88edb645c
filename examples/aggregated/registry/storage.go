// Package registry stores the sample server's widgets in memory: a map under a mutex, with
// just get, list and create. Lists take a configurable delay so that a flood of them can
// overload a small concurrency limit on purpose.
package registry

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	demov1alpha1 "example.com/aggregated/apis/demo/v1alpha1"
)

// Widgets is the rest.Storage of the widgets resource.
type Widgets struct {
	rest.TableConvertor
	listDelay time.Duration

	mu       sync.Mutex
	objects  map[types.NamespacedName]*demov1alpha1.Widget
	revision int64
}

// Widgets is a getter, lister and creater of a namespaced resource.
var (
	_ rest.Storage              = &Widgets{}
	_ rest.Scoper               = &Widgets{}
	_ rest.SingularNameProvider = &Widgets{}
	_ rest.Getter               = &Widgets{}
	_ rest.Lister               = &Widgets{}
	_ rest.Creater              = &Widgets{}
)

// NewWidgets returns empty storage whose lists each take listDelay (0 for none).
func NewWidgets(listDelay time.Duration) *Widgets {
	return &Widgets{
		TableConvertor: rest.NewDefaultTableConvertor(demov1alpha1.Resource("widgets")),
		listDelay:      listDelay,
		objects:        map[types.NamespacedName]*demov1alpha1.Widget{},
	}
}

// New returns an empty Widget.
func (*Widgets) New() runtime.Object { return &demov1alpha1.Widget{} }

// Destroy releases nothing: the storage is a map.
func (*Widgets) Destroy() {}

// NamespaceScoped reports that widgets live in namespaces.
func (*Widgets) NamespaceScoped() bool { return true }

// GetSingularName is the singular resource name, for discovery.
func (*Widgets) GetSingularName() string { return "widget" }

// NewList returns an empty WidgetList.
func (*Widgets) NewList() runtime.Object { return &demov1alpha1.WidgetList{} }

// Get returns the widget name in the request's namespace.
func (s *Widgets) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	key := types.NamespacedName{Namespace: genericapirequest.NamespaceValue(ctx), Name: name}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.objects[key]
	if !ok {
		return nil, apierrors.NewNotFound(demov1alpha1.Resource("widgets"), name)
	}
	return w.DeepCopy(), nil
}

// List waits the list delay (or until the request ends), then returns the widgets of the
// request's namespace (all namespaces when it has none) that match the label selector.
func (s *Widgets) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	selector := labels.Everything()
	if options != nil && options.LabelSelector != nil {
		selector = options.LabelSelector
	}
	return s.list(genericapirequest.NamespaceValue(ctx), selector), nil
}

// wait sleeps the list delay, returning early with a timeout error if ctx ends.
func (s *Widgets) wait(ctx context.Context) error {
	if s.listDelay <= 0 {
		return nil
	}
	timer := time.NewTimer(s.listDelay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return apierrors.NewTimeoutError(fmt.Sprintf("list interrupted: %v", ctx.Err()), 1)
	}
}

// list returns the matching widgets sorted by namespace and name.
func (s *Widgets) list(namespace string, selector labels.Selector) *demov1alpha1.WidgetList {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &demov1alpha1.WidgetList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(s.revision, 10)}}
	for key, w := range s.objects {
		if (namespace == "" || key.Namespace == namespace) && selector.Matches(labels.Set(w.Labels)) {
			out.Items = append(out.Items, *w.DeepCopy())
		}
	}
	sort.Slice(out.Items, func(i, j int) bool {
		a, b := out.Items[i], out.Items[j]
		return a.Namespace < b.Namespace || (a.Namespace == b.Namespace && a.Name < b.Name)
	})
	return out
}

// Create stores a new widget in the request's namespace after the server's validation.
func (s *Widgets) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc,
	_ *metav1.CreateOptions) (runtime.Object, error) {
	w, ok := obj.(*demov1alpha1.Widget)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected a Widget, got %T", obj))
	}
	w = w.DeepCopy()
	if err := prepareForCreate(ctx, w); err != nil {
		return nil, err
	}
	if validate != nil {
		if err := validate(ctx, w); err != nil {
			return nil, err
		}
	}
	return s.insert(w)
}

// prepareForCreate fills the server-set metadata and checks the name and namespace.
func prepareForCreate(ctx context.Context, w *demov1alpha1.Widget) error {
	namespace := genericapirequest.NamespaceValue(ctx)
	if w.Name == "" {
		return apierrors.NewBadRequest("metadata.name is required: set a name for the widget")
	}
	if w.Namespace != "" && w.Namespace != namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("metadata.namespace %q does not match the request's namespace %q: "+
			"omit it or make them equal", w.Namespace, namespace))
	}
	w.Namespace = namespace
	w.UID = uuid.NewUUID()
	w.CreationTimestamp = metav1.Now()
	return nil
}

// insert adds w unless its name is taken, giving it the next resource version.
func (s *Widgets) insert(w *demov1alpha1.Widget) (runtime.Object, error) {
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.objects[key]; taken {
		return nil, apierrors.NewAlreadyExists(demov1alpha1.Resource("widgets"), w.Name)
	}
	s.revision++
	w.ResourceVersion = strconv.FormatInt(s.revision, 10)
	s.objects[key] = w
	return w.DeepCopy(), nil
}
