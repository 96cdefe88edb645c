// Package nativewrite holds the projection's writes of kube-apiserver's native flowcontrol
// objects, each with a precondition, so that an administrator's object that appears between
// the operator's read and its write is neither taken over nor deleted:
//   - Create makes an object the snapshot does not hold, and fails on AlreadyExists rather than
//     applying over it;
//   - Apply updates an object the snapshot holds, only at the resourceVersion it was read at;
//   - Delete removes an object only when it is the operator's (native.Deletable: managed-by
//     label, source annotation and one of the projection's names) and still the UID and
//     resourceVersion that were read.
//
// Each reports whether it wrote; a failed precondition is no error (the next snapshot,
// which shows the change, brings a new plan).
package nativewrite

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/internal/native"
)

// Create creates obj with the operator's field manager. It returns false, without error, when
// an object of that name already exists (someone created it since the snapshot). The created
// object's field ownership is then turned from an update's into the operator's apply, so that
// later applies own (and may drop) every field the projection wrote.
func Create(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	if obj.GetResourceVersion() != "" {
		return false, fmt.Errorf("creating %s %s: it has a resourceVersion (%s): it is not new", native.KindOf(obj),
			obj.GetName(), obj.GetResourceVersion())
	}
	err := c.Create(ctx, obj, client.FieldOwner(native.FieldManager))
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, upgradeOwnership(ctx, c, obj)
}

// upgradeOwnership turns the operator's update entry of a created object's managed fields into
// an apply entry, at the created object's resourceVersion. On a conflict the next apply (with
// force) takes the fields over all the same.
func upgradeOwnership(ctx context.Context, c client.Client, obj client.Object) error {
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(obj, sets.New(native.FieldManager), native.FieldManager)
	if err != nil || patch == nil {
		return err
	}
	err = c.Patch(ctx, obj, client.RawPatch("application/json-patch+json", patch))
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// Apply applies obj with server-side apply (the operator's field manager, forcing ownership of
// the fields it projects) on the object at resourceVersion, which must be set. It returns
// false, without error, when the object changed or went away since: the write then fails
// rather than re-creating or taking over what is there now.
func Apply(ctx context.Context, c client.Client, obj client.Object, resourceVersion string) (bool, error) {
	if resourceVersion == "" {
		return false, fmt.Errorf("applying %s %s: no resourceVersion to apply at: create it instead",
			native.KindOf(obj), obj.GetName())
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false, err
	}
	delete(u, "status")
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	applied := &unstructured.Unstructured{Object: u}
	applied.SetResourceVersion(resourceVersion)
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied),
		client.FieldOwner(native.FieldManager), client.ForceOwnership)
	switch {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, runtime.DefaultUnstructuredConverter.FromUnstructured(applied.Object, obj)
}

// Delete deletes obj, as read, when the operator may (native.Deletable), only if it still has
// the UID and resourceVersion it was read with. It returns false, without error, when it may
// not, when the object is gone or when it changed since.
func Delete(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	if !native.Deletable(obj) {
		return false, nil
	}
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	if uid == "" || rv == "" {
		return false, fmt.Errorf("deleting %s %s: no UID and resourceVersion to delete at", native.KindOf(obj), obj.GetName())
	}
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
