package nativewrite

import (
	"context"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// level is a native level of the given name; owned carries the operator's label and annotation.
func level(name string, shares int32, owned bool) *flowcontrolv1.PriorityLevelConfiguration {
	plc := &flowcontrolv1.PriorityLevelConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: flowcontrolv1.SchemeGroupVersion.String(), Kind: "PriorityLevelConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To(shares),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}},
	}
	if owned {
		plc.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
		plc.Annotations = map[string]string{flowv1.AnnotationSource: "RequestPriority/tenant"}
	}
	return plc
}

func newClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := flowcontrolv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// get reads the level name; nil when it does not exist.
func get(t *testing.T, c client.Client, name string) *flowcontrolv1.PriorityLevelConfiguration {
	t.Helper()
	var plc flowcontrolv1.PriorityLevelConfiguration
	err := c.Get(context.Background(), client.ObjectKey{Name: name}, &plc)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &plc
}

// TestCreateNeverTakesOverAnAdministratorsObject: the snapshot had no apf-tenant; an
// administrator created one in the quiet period before the operator's write.
func TestCreateNeverTakesOverAnAdministratorsObject(t *testing.T) {
	admins := level("apf-tenant", 3, false)
	c := newClient(t, admins)
	created, err := Create(context.Background(), c, level("apf-tenant", 40, true))
	if err != nil || created {
		t.Fatalf("Create over an administrator's object = %v, %v; want false, nil", created, err)
	}
	got := get(t, c, "apf-tenant")
	if got.Labels[flowv1.LabelManagedBy] != "" || *got.Spec.Limited.NominalConcurrencyShares != 3 {
		t.Fatalf("the administrator's object was taken over: %+v", got)
	}
}

func TestCreateMakesAMissingObject(t *testing.T) {
	c := newClient(t)
	created, err := Create(context.Background(), c, level("apf-tenant", 40, true))
	if err != nil || !created {
		t.Fatalf("Create = %v, %v; want true, nil", created, err)
	}
	if got := get(t, c, "apf-tenant"); got == nil || *got.Spec.Limited.NominalConcurrencyShares != 40 {
		t.Fatalf("created %+v; want the desired level", got)
	}
	if _, err := Create(context.Background(), c, get(t, c, "apf-tenant")); err == nil {
		t.Fatal("Create of an object read from the cluster (with a resourceVersion) must fail")
	}
}

// TestApplyOnlyAtTheVersionRead: the operator's level was deleted and re-created by an
// administrator in the quiet period; an apply at the version the snapshot read must not write.
func TestApplyOnlyAtTheVersionRead(t *testing.T) {
	c := newClient(t, level("apf-tenant", 40, true))
	read := get(t, c, "apf-tenant")
	if err := c.Delete(context.Background(), read.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), level("apf-tenant", 3, false)); err != nil {
		t.Fatal(err)
	}
	applied, err := Apply(context.Background(), c, level("apf-tenant", 50, true), read.ResourceVersion)
	if err != nil || applied {
		t.Fatalf("Apply at a stale version = %v, %v; want false, nil", applied, err)
	}
	if got := get(t, c, "apf-tenant"); got.Labels[flowv1.LabelManagedBy] != "" || *got.Spec.Limited.NominalConcurrencyShares != 3 {
		t.Fatalf("the administrator's object was overwritten: %+v", got)
	}
	if _, err := Apply(context.Background(), c, level("apf-tenant", 50, true), ""); err == nil {
		t.Fatal("Apply without a resourceVersion must fail (the object is to be created)")
	}
}

func TestDeleteWithPreconditions(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		stored      *flowcontrolv1.PriorityLevelConfiguration
		replace     *flowcontrolv1.PriorityLevelConfiguration // stored after the read, under the same name
		wantDeleted bool
	}{
		{"the operator's level, unchanged", level("apf-tenant", 40, true), nil, true},
		{"the operator's label on an administrator's name", level("tenant", 40, true), nil, false},
		{"an administrator's level with the operator's prefix", level("apf-tenant", 40, false), nil, false},
		{"re-created by an administrator in the quiet period", level("apf-tenant", 40, true),
			level("apf-tenant", 3, false), false},
		{"re-created with the operator's label in the quiet period", level("apf-tenant", 40, true),
			level("apf-tenant", 3, true), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.stored)
			read := get(t, c, tc.stored.Name)
			if tc.replace != nil {
				if err := c.Delete(ctx, read.DeepCopy()); err != nil {
					t.Fatal(err)
				}
				if err := c.Create(ctx, tc.replace); err != nil {
					t.Fatal(err)
				}
			}
			// The fake client leaves UIDs empty and checks the resourceVersion precondition
			// (kube-apiserver checks both): a re-created object has a new resourceVersion.
			read.UID = "read"
			deleted, err := Delete(ctx, c, read)
			if err != nil || deleted != tc.wantDeleted {
				t.Fatalf("Delete = %v, %v; want %v, nil", deleted, err, tc.wantDeleted)
			}
			if exists := get(t, c, tc.stored.Name) != nil; exists == tc.wantDeleted {
				t.Fatalf("after Delete the level exists=%v; want %v", exists, !tc.wantDeleted)
			}
		})
	}
}
