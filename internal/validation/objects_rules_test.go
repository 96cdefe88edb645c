package validation

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func rpObj(name string, spec v1alpha1.RequestPrioritySpec) *v1alpha1.RequestPriority {
	return &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func fsObj(name string, spec v1alpha1.FlowSchemaSpec) *v1alpha1.FlowSchema {
	return &v1alpha1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// fsTo returns a valid FlowSchema referring to rp, with or without a distinguisher.
func fsTo(name, rp string, distinguisher bool) *v1alpha1.FlowSchema {
	s := schema()
	s.RequestPriority.Name = rp
	if !distinguisher {
		s.FlowDistinguisher = nil
	}
	return fsObj(name, s)
}

func singleQueue(level int32) v1alpha1.RequestPrioritySpec {
	s := queued(level)
	s.QueuesPerWidth, s.HandSize = ptr.To[int32](1), nil
	return s
}

func TestRequestPriorityAgainstOthers(t *testing.T) {
	ctx := context.Background()
	existing := rpObj("system-high", queued(1000))
	others := NewSet([]*v1alpha1.RequestPriority{existing, rpObj("twin", queued(3000)), rpObj("twin-2", queued(3000))},
		[]*v1alpha1.FlowSchema{fsTo("with-d", "system-high", true), fsTo("without-d", "system-low", false),
			fsTo("legacy", "twin", true)})
	level, qpw := specPath.Child("priorityLevel"), specPath.Child("queuesPerWidth")
	cases := []struct {
		name         string
		old, obj     *v1alpha1.RequestPriority
		want         field.ErrorList
		wantWarnings []string
	}{
		{"create at a free level", nil, rpObj("new", queued(1500)), nil, nil},
		{"update itself keeps its level", existing, rpObj("system-high", queued(1000)), nil, nil},
		{"create at a used level", nil, rpObj("new", queued(1000)), field.ErrorList{
			{Type: field.ErrorTypeDuplicate, Field: "spec.priorityLevel", BadValue: int32(1000),
				Detail: `already used by RequestPriority "system-high"; levels are unique cluster-wide`}}, nil},
		{"level change is immutable", existing, rpObj("system-high", queued(1500)), field.ErrorList{
			field.Invalid(level, int32(1500), "priorityLevel is immutable (it is 1000): delete the RequestPriority and create it again")}, nil},
		{"single queue under a distinguisher", existing, rpObj("system-high", singleQueue(1000)), field.ErrorList{
			field.Forbidden(qpw, `FlowSchema "with-d" refer(s) to this RequestPriority with a flowDistinguisher, which queuesPerWidth 1 (a single queue) cannot take: remove their flowDistinguisher first, or keep queuesPerWidth above 1`)}, nil},
		{"create exempt level without referrers", nil, rpObj("system-high2", v1alpha1.RequestPrioritySpec{}), nil, nil},
		{"create single queue without distinguishers", nil, rpObj("system-low", singleQueue(2000)), nil, nil},
		{"update of a duplicate warns", rpObj("twin", queued(3000)), rpObj("twin", queued(3000)), nil,
			[]string{`spec.priorityLevel: RequestPriority "twin-2" has the same level 3000`}},
		{"conflict that predates the update warns", rpObj("twin", singleQueue(3000)), rpObj("twin", singleQueue(3000)), nil,
			[]string{`spec.priorityLevel: RequestPriority "twin-2" has the same level 3000`,
				`spec.queuesPerWidth: FlowSchema "legacy" refer(s) to this RequestPriority with a flowDistinguisher`}},
		{"invalid spec skips the reverse check", existing, rpObj("system-high", v1alpha1.RequestPrioritySpec{PriorityLevel: 1000}), field.ErrorList{
			field.Required(specPath.Child("assuredConcurrencyShares"), ""), field.Required(qpw, ""),
			field.Required(specPath.Child("queueLengthLimit"), "")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs, warnings, err := RequestPriority(ctx, c.old, c.obj, others)
			if err != nil {
				t.Fatal(err)
			}
			matcher.Test(t, c.want, errs)
			assertWarnings(t, warnings, c.wantWarnings)
		})
	}
}

func TestRequestPriorityExemptUnderDistinguisher(t *testing.T) {
	others := NewSet(nil, []*v1alpha1.FlowSchema{fsTo("with-d", "top", true)})
	errs, warnings, err := RequestPriority(context.Background(), nil, rpObj("top", v1alpha1.RequestPrioritySpec{}), others)
	if err != nil {
		t.Fatal(err)
	}
	matcher.Test(t, field.ErrorList{field.Forbidden(specPath.Child("priorityLevel"),
		`FlowSchema "with-d" refer(s) to this RequestPriority with a flowDistinguisher, which the exempt level 0 cannot take`)}, errs)
	assertWarnings(t, warnings, nil)
}

func TestFlowSchemaAgainstOthers(t *testing.T) {
	ctx := context.Background()
	withTop := NewSet([]*v1alpha1.RequestPriority{rpObj("system-high", queued(1000)),
		rpObj("system-low", singleQueue(2000)), rpObj("exempt", v1alpha1.RequestPrioritySpec{})}, nil)
	withoutTop := NewSet([]*v1alpha1.RequestPriority{rpObj("system-high", queued(1000))}, nil)
	dPath := specPath.Child("flowDistinguisher")
	cases := []struct {
		name         string
		others       *Set
		obj          *v1alpha1.FlowSchema
		want         field.ErrorList
		wantWarnings []string
	}{
		{"distinguisher with many queues", withTop, fsTo("a", "system-high", true), nil, nil},
		{"distinguisher with one queue", withTop, fsTo("a", "system-low", true), field.ErrorList{
			field.Forbidden(dPath, `RequestPriority "system-low" has queuesPerWidth 1`)}, nil},
		{"distinguisher at an actual exempt level", withTop, fsTo("a", "exempt", true), field.ErrorList{
			field.Forbidden(dPath, `RequestPriority "exempt" has the exempt priorityLevel 0`)}, nil},
		{"distinguisher at the backstop exempt level", withoutTop, fsTo("a", BackstopExemptName, true), field.ErrorList{
			field.Forbidden(dPath, `RequestPriority "system-top" has the exempt priorityLevel 0`)}, nil},
		{"system-top is not a backstop while a level 0 exists", withTop, fsTo("a", BackstopExemptName, true), nil,
			[]string{`spec.requestPriority.name: RequestPriority "system-top" not found`}},
		{"missing reference warns", withTop, fsTo("a", "later", true), nil,
			[]string{`spec.requestPriority.name: RequestPriority "later" not found`}},
		{"stateless errors still reported", withTop, fsObj("a", v1alpha1.FlowSchemaSpec{MatchingPriority: -1,
			RequestPriority: v1alpha1.RequestPriorityReference{Name: "system-high"}, Match: []v1alpha1.Conjunction{}}),
			field.ErrorList{field.Invalid(specPath.Child("matchingPriority"), int32(-1), "")},
			[]string{"spec.match: the FlowSchema matches no request"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs, warnings, err := FlowSchema(ctx, nil, c.obj, c.others)
			if err != nil {
				t.Fatal(err)
			}
			matcher.Test(t, c.want, errs)
			assertWarnings(t, warnings, c.wantWarnings)
		})
	}
}

func TestExemptAccess(t *testing.T) {
	ctx := context.Background()
	access := DefaultExemptAccess("system:serviceaccount:apf-system:apf-operator")
	admin := authenticationv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters", "system:authenticated"}}
	operator := authenticationv1.UserInfo{Username: "system:serviceaccount:apf-system:apf-operator"}
	dev := authenticationv1.UserInfo{Username: "dev", Groups: []string{"system:authenticated", "developers"}}
	top, high := rpObj("top", v1alpha1.RequestPrioritySpec{}), rpObj("high", queued(1000))
	others := NewSet([]*v1alpha1.RequestPriority{top, high}, nil)
	emptyOthers := NewSet(nil, nil)

	forbiddenLevel := field.ErrorList{field.Forbidden(specPath.Child("priorityLevel"),
		`user "dev" may not create or update a RequestPriority at the exempt level 0: only members of group system:masters or user system:serviceaccount:apf-system:apf-operator may; use a priorityLevel above 0`)}
	for _, c := range []struct {
		name     string
		user     authenticationv1.UserInfo
		old, obj *v1alpha1.RequestPriority
		want     field.ErrorList
	}{
		{"admin creates exempt", admin, nil, top, nil},
		{"operator creates exempt", operator, nil, top, nil},
		{"dev creates exempt", dev, nil, top, forbiddenLevel},
		{"dev updates exempt", dev, top, top, forbiddenLevel},
		{"dev creates queued", dev, nil, high, nil},
	} {
		t.Run(c.name, func(t *testing.T) { matcher.Test(t, c.want, access.RequestPriority(c.user, c.old, c.obj)) })
	}

	refPath := specPath.Child("requestPriority", "name")
	for _, c := range []struct {
		name     string
		user     authenticationv1.UserInfo
		others   *Set
		old, obj *v1alpha1.FlowSchema
		want     field.ErrorList
	}{
		{"admin refers to exempt", admin, others, nil, fsTo("a", "top", false), nil},
		{"dev refers to queued", dev, others, nil, fsTo("a", "high", false), nil},
		{"dev refers to missing", dev, others, nil, fsTo("a", "later", false), nil},
		{"dev refers to exempt", dev, others, nil, fsTo("a", "top", false), field.ErrorList{field.Forbidden(refPath,
			`user "dev" may not create or update a FlowSchema that refers to RequestPriority "top" at the exempt level 0`)}},
		{"dev moves a schema off the exempt level", dev, others, fsTo("a", "top", false), fsTo("a", "high", false),
			field.ErrorList{field.Forbidden(refPath, `refers to RequestPriority "top" at the exempt level 0`)}},
		{"dev refers to the backstop exempt level", dev, emptyOthers, nil, fsTo("a", BackstopExemptName, false),
			field.ErrorList{field.Forbidden(refPath, `refers to RequestPriority "system-top" at the exempt level 0`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs, err := access.FlowSchema(ctx, c.user, c.old, c.obj, c.others)
			if err != nil {
				t.Fatal(err)
			}
			matcher.Test(t, c.want, errs)
		})
	}
}

// assertWarnings checks that each warning starts with the wanted prefix, in order.
func assertWarnings(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("warnings = %q, want %d starting with %q", got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}
