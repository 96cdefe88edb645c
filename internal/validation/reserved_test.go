package validation

import (
	"context"
	"fmt"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestReservedName(t *testing.T) {
	access := DefaultExemptAccess("system:serviceaccount:apf-system:apf-operator")
	admin := authenticationv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters"}}
	operator := authenticationv1.UserInfo{Username: "system:serviceaccount:apf-system:apf-operator"}
	dev := authenticationv1.UserInfo{Username: "dev", Groups: []string{"developers"}}
	namePath := field.NewPath("metadata", "name")
	for _, c := range []struct {
		name    string
		user    authenticationv1.UserInfo
		op      Operation
		objName string
		want    field.ErrorList
	}{
		{"admin deletes reserved", admin, OperationDelete, "system-high", nil},
		{"operator creates reserved", operator, OperationCreate, "system-low", nil},
		{"dev creates unreserved", dev, OperationCreate, "team-a", nil},
		{"dev creates a name containing the prefix later", dev, OperationCreate, "team-system-x", nil},
		{"dev creates reserved", dev, OperationCreate, "system-mine", field.ErrorList{field.Forbidden(namePath,
			`user "dev" may not create FlowSchema "system-mine": names starting with "system-" are reserved for the system's objects and only members of group system:masters or user system:serviceaccount:apf-system:apf-operator may; choose a name without the prefix or ask a cluster administrator`)}},
		{"dev updates reserved", dev, OperationUpdate, "system-high", field.ErrorList{field.Forbidden(namePath,
			`user "dev" may not update FlowSchema "system-high"`)}},
		{"dev deletes reserved", dev, OperationDelete, "system-high", field.ErrorList{field.Forbidden(namePath,
			`user "dev" may not delete FlowSchema "system-high"`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			matcher.Test(t, c.want, access.ReservedName(c.user, c.op, "FlowSchema", c.objName))
		})
	}
}

func TestExemptDelete(t *testing.T) {
	ctx := context.Background()
	access := ExemptAccess{Groups: []string{"platform-admins"}}
	admin := authenticationv1.UserInfo{Username: "alice", Groups: []string{"platform-admins"}}
	dev := authenticationv1.UserInfo{Username: "dev", Groups: []string{"system:masters-not"}}
	top, high := rpObj("top", v1alpha1.RequestPrioritySpec{}), rpObj("high", queued(1000))
	others := NewSet([]*v1alpha1.RequestPriority{top, high}, nil)
	levelPath := specPath.Child("priorityLevel")

	matcher.Test(t, nil, access.RequestPriorityDelete(admin, top))
	matcher.Test(t, nil, access.RequestPriorityDelete(dev, high))
	matcher.Test(t, field.ErrorList{field.Forbidden(levelPath,
		`user "dev" may not delete RequestPriority "top" at the exempt level 0: only members of groups system:masters, platform-admins may; ask a cluster administrator`)},
		access.RequestPriorityDelete(dev, top))

	refPath := specPath.Child("requestPriority", "name")
	for _, c := range []struct {
		name   string
		user   authenticationv1.UserInfo
		others *Set
		obj    *v1alpha1.FlowSchema
		want   field.ErrorList
	}{
		{"admin deletes an exempt schema", admin, others, fsTo("a", "top", false), nil},
		{"dev deletes a queued schema", dev, others, fsTo("a", "high", false), nil},
		{"dev deletes a dangling schema", dev, others, fsTo("a", "gone", false), nil},
		{"dev deletes an exempt schema", dev, others, fsTo("a", "top", false), field.ErrorList{field.Forbidden(refPath,
			`user "dev" may not delete FlowSchema "a", which refers to RequestPriority "top" at the exempt level 0`)}},
		{"dev deletes a schema at the backstop", dev, NewSet(nil, nil), fsTo("a", BackstopExemptName, false),
			field.ErrorList{field.Forbidden(refPath, `refers to RequestPriority "system-top" at the exempt level 0`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs, err := access.FlowSchemaDelete(ctx, c.user, c.obj, c.others)
			if err != nil {
				t.Fatal(err)
			}
			matcher.Test(t, c.want, errs)
		})
	}
}

// TestMastersNeverLockedOut: whatever groups the operator is configured with, members of
// system:masters may configure the exempt level and the reserved names; others are refused.
func TestMastersNeverLockedOut(t *testing.T) {
	ctx := context.Background()
	masters := authenticationv1.UserInfo{Username: "root", Groups: []string{MastersGroup}}
	dev := authenticationv1.UserInfo{Username: "dev", Groups: []string{"platform-admins-not"}}
	top := rpObj("top", v1alpha1.RequestPrioritySpec{})
	others := NewSet([]*v1alpha1.RequestPriority{top}, nil)
	for _, access := range []ExemptAccess{{}, {Groups: []string{"platform-admins"}}, {Users: []string{"alice"}}} {
		t.Run(fmt.Sprintf("groups=%v,users=%v", access.Groups, access.Users), func(t *testing.T) {
			if !access.Allows(masters) || access.Allows(dev) {
				t.Fatalf("Allows: masters %v, dev %v; want true, false", access.Allows(masters), access.Allows(dev))
			}
			matcher.Test(t, nil, access.RequestPriority(masters, nil, top))
			matcher.Test(t, nil, access.RequestPriorityDelete(masters, top))
			matcher.Test(t, nil, access.ReservedName(masters, OperationDelete, "FlowSchema", "system-high"))
			errs, err := access.FlowSchemaDelete(ctx, masters, fsTo("a", "top", false), others)
			if err != nil {
				t.Fatal(err)
			}
			matcher.Test(t, nil, errs)
			matcher.Test(t, field.ErrorList{field.Forbidden(specPath.Child("priorityLevel"),
				"system:masters")}, access.RequestPriorityDelete(dev, top))
		})
	}
}

// TestExemptAccessWho: messages name each allowed group and user, in the plural for several.
func TestExemptAccessWho(t *testing.T) {
	for _, c := range []struct {
		access ExemptAccess
		want   string
	}{
		{ExemptAccess{}, "only members of group system:masters may"},
		{ExemptAccess{Users: []string{"alice"}}, "only members of group system:masters or user alice may"},
		{ExemptAccess{Groups: []string{"ops"}, Users: []string{"alice", "bob"}},
			"only members of groups system:masters, ops or users alice, bob may"},
	} {
		if got := c.access.who(); got != c.want {
			t.Errorf("%+v: who() = %q, want %q", c.access, got, c.want)
		}
	}
}
