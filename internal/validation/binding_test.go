package validation

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestBindingRules(t *testing.T) {
	bound := func(mutate func(*v1alpha1.RequestPrioritySpec)) *v1alpha1.RequestPrioritySpec {
		s := v1alpha1.RequestPrioritySpec{PriorityLevel: 1000, NativeLevel: "workload-high"}
		mutate(&s)
		return &s
	}
	carved := func(mutate func(*v1alpha1.RequestPrioritySpec)) *v1alpha1.RequestPrioritySpec {
		s := queued(1000)
		s.SharesFrom = "workload-low"
		mutate(&s)
		return &s
	}
	autopilot := &v1alpha1.RequestPriorityAutopilot{MinShares: 5, MaxShares: 20}
	cases := []struct {
		name string
		spec *v1alpha1.RequestPrioritySpec
		want field.ErrorList
	}{
		{"bound without queuing fields", bound(func(*v1alpha1.RequestPrioritySpec) {}), nil},
		{"bound with every queuing field", bound(func(s *v1alpha1.RequestPrioritySpec) {
			q := queued(1000)
			q.NativeLevel = s.NativeLevel
			*s = q
		}), nil},
		{"bound with queues and no hand", bound(func(s *v1alpha1.RequestPrioritySpec) { s.QueuesPerWidth = ptr.To[int32](8) }),
			field.ErrorList{field.Required(specPath.Child("handSize"), "required when queuesPerWidth > 1")}},
		{"bound with a hand and no queues", bound(func(s *v1alpha1.RequestPrioritySpec) { s.HandSize = ptr.To[int32](4) }),
			field.ErrorList{field.Forbidden(specPath.Child("handSize"), "allowed only when queuesPerWidth > 1")}},
		{"bound with shares out of range", bound(func(s *v1alpha1.RequestPrioritySpec) { s.AssuredConcurrencyShares = ptr.To[int32](-1) }),
			field.ErrorList{field.Invalid(specPath.Child("assuredConcurrencyShares"), int32(-1), "between 0 and 100000")}},
		{"bound with autopilot", bound(func(s *v1alpha1.RequestPrioritySpec) {
			s.AssuredConcurrencyShares, s.Autopilot = ptr.To[int32](10), autopilot
		}), field.ErrorList{field.Forbidden(specPath.Child("autopilot"), "the autopilot never moves a bound level's shares")}},
		{"bound and carved", bound(func(s *v1alpha1.RequestPrioritySpec) { s.SharesFrom = "workload-low" }),
			field.ErrorList{field.Forbidden(specPath.Child("sharesFrom"), "a bound level adds no shares")}},
		{"bound to a bad name", bound(func(s *v1alpha1.RequestPrioritySpec) { s.NativeLevel = "Workload_High" }),
			field.ErrorList{field.Invalid(specPath.Child("nativeLevel"), "Workload_High", "must name a native PriorityLevelConfiguration")}},
		{"bound at the exempt level", &v1alpha1.RequestPrioritySpec{NativeLevel: "exempt"},
			field.ErrorList{field.Forbidden(specPath.Child("nativeLevel"), "priorityLevel 0 is already bound")}},
		{"unbound still needs its fields", &v1alpha1.RequestPrioritySpec{PriorityLevel: 7}, field.ErrorList{
			field.Required(specPath.Child("assuredConcurrencyShares"), "or bind the level with nativeLevel"),
			field.Required(specPath.Child("queuesPerWidth"), "or bind the level with nativeLevel"),
			field.Required(specPath.Child("queueLengthLimit"), "or bind the level with nativeLevel"),
		}},
		{"carved", carved(func(*v1alpha1.RequestPrioritySpec) {}), nil},
		{"carved with 0 shares", carved(func(s *v1alpha1.RequestPrioritySpec) { s.AssuredConcurrencyShares = ptr.To[int32](0) }),
			field.ErrorList{field.Invalid(specPath.Child("assuredConcurrencyShares"), int32(0), "must be above 0 with sharesFrom")}},
		{"carved with autopilot", carved(func(s *v1alpha1.RequestPrioritySpec) { s.Autopilot = autopilot }),
			field.ErrorList{field.Forbidden(specPath.Child("autopilot"), "carved shares are fixed")}},
		{"carved from a bad name", carved(func(s *v1alpha1.RequestPrioritySpec) { s.SharesFrom = "-x" }),
			field.ErrorList{field.Invalid(specPath.Child("sharesFrom"), "-x", "must name a native")}},
		{"carved at the exempt level", &v1alpha1.RequestPrioritySpec{SharesFrom: "workload-low"},
			field.ErrorList{field.Forbidden(specPath.Child("sharesFrom"), "takes no shares")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			matcher.Test(t, c.want, RequestPrioritySpec(c.spec, specPath))
		})
	}
}

func TestBindingsAreImmutable(t *testing.T) {
	plain, bound, rebound, carved := queued(10), queued(10), queued(10), queued(10)
	bound.NativeLevel, rebound.NativeLevel, carved.SharesFrom = "workload-high", "workload-low", "global-default"
	matcher.Test(t, field.ErrorList{field.Forbidden(specPath.Child("nativeLevel"), "can be neither added nor removed")},
		RequestPriorityUpdate(&plain, &bound, specPath))
	matcher.Test(t, field.ErrorList{field.Forbidden(specPath.Child("nativeLevel"), "can be neither added nor removed")},
		RequestPriorityUpdate(&bound, &plain, specPath))
	matcher.Test(t, field.ErrorList{field.Invalid(specPath.Child("nativeLevel"), "workload-low", "nativeLevel is immutable")},
		RequestPriorityUpdate(&bound, &rebound, specPath))
	matcher.Test(t, field.ErrorList{field.Forbidden(specPath.Child("sharesFrom"), "can be neither added nor removed")},
		RequestPriorityUpdate(&plain, &carved, specPath))
	if errs := RequestPriorityUpdate(&bound, &bound, specPath); len(errs) != 0 {
		t.Errorf("an unchanged binding: %v", errs)
	}
}

func TestBoundLevelAcceptsDistinguisher(t *testing.T) {
	bound := v1alpha1.RequestPrioritySpec{PriorityLevel: 5, NativeLevel: "workload-high"}
	if !AcceptsDistinguisher(&bound) {
		t.Error("a bound level without queuesPerWidth refuses a distinguisher; its native level decides")
	}
	bound.QueuesPerWidth = ptr.To[int32](1)
	if AcceptsDistinguisher(&bound) {
		t.Error("a bound level with a single queue per width accepts a distinguisher")
	}
}

func TestBindingToExemptNeedsExemptRights(t *testing.T) {
	access := DefaultExemptAccess()
	rp := &v1alpha1.RequestPriority{Spec: v1alpha1.RequestPrioritySpec{PriorityLevel: 10, NativeLevel: ExemptLevelName}}
	tenant := authenticationv1.UserInfo{Username: "tenant"}
	matcher.Test(t, field.ErrorList{field.Forbidden(field.NewPath("spec", "nativeLevel"), "may not bind a RequestPriority to kube-apiserver's exempt level")},
		access.RequestPriority(tenant, nil, rp))
	admin := authenticationv1.UserInfo{Username: "admin", Groups: []string{MastersGroup}}
	if errs := access.RequestPriority(admin, nil, rp); len(errs) != 0 {
		t.Errorf("an administrator may not bind exempt: %v", errs)
	}
	rp.Spec.NativeLevel = "workload-high"
	if errs := access.RequestPriority(tenant, nil, rp); len(errs) != 0 {
		t.Errorf("a tenant may not bind workload-high: %v", errs)
	}
}
