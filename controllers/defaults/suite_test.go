package defaults

import (
	"context"
	"fmt"
	"os"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// The package's envtest suite checks the patches against a real kube-apiserver, which alone
// says how a failed JSON patch test is refused, and runs the defaults reconciler alone (in a
// manager of its own) for the upgrade; it runs, with the rest of the operator, in the suite
// of package controllers too.

// k8s reads and writes directly through the API server, as a user would: no cache. restConfig
// is the admin's, for the managers of tests that run the reconciler.
var (
	k8s        client.Client
	restConfig *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		return fail(err)
	}
	cfg, err := env.Start()
	if err != nil {
		return fail(fmt.Errorf("starting envtest: %w", err))
	}
	defer func() { _ = env.Stop() }()
	restConfig = cfg
	if k8s, err = client.New(cfg, client.Options{Scheme: managerbase.Scheme()}); err != nil {
		return fail(err)
	}
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "controllers/defaults suite:", err)
	return 1
}

// create creates obj and deletes it when the test ends.
func create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	t.Cleanup(func() {
		if err := k8s.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", obj.GetName(), err)
		}
	})
}

// get returns the current version of the named object.
func get[T any, PT interface {
	*T
	client.Object
}](t testing.TB, name string) PT {
	t.Helper()
	obj := PT(new(T))
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, obj); err != nil {
		t.Fatalf("getting %T %s: %v", obj, name, err)
	}
	return obj
}

// update applies edit to the current version of the named object and writes it back,
// retrying on a conflict.
func update[T any, PT interface {
	*T
	client.Object
}](t testing.TB, name string, edit func(PT)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := get[T, PT](t, name)
		edit(obj)
		return k8s.Update(context.Background(), obj)
	}); err != nil {
		t.Fatalf("updating %s: %v", name, err)
	}
}

func getRP(t testing.TB, name string) *flowv1.RequestPriority {
	return get[flowv1.RequestPriority](t, name)
}

func getFS(t testing.TB, name string) *flowv1.FlowSchema {
	return get[flowv1.FlowSchema](t, name)
}

func updateRP(t testing.TB, name string, edit func(*flowv1.RequestPriority)) {
	update[flowv1.RequestPriority](t, name, edit)
}

func updateFS(t testing.TB, name string, edit func(*flowv1.FlowSchema)) {
	update[flowv1.FlowSchema](t, name, edit)
}

// defaultRP and defaultFS return the named default object as internal/defaults declares it.
func defaultRP(name string) flowv1.RequestPriority {
	if rp, ok := defaults.RequestPriority(name); ok {
		return rp
	}
	panic("no default RequestPriority " + name)
}

func defaultFS(name string) flowv1.FlowSchema {
	if fs, ok := defaults.FlowSchema(name); ok {
		return fs
	}
	panic("no default FlowSchema " + name)
}
