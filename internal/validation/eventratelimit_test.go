package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestEventRateLimitSpec(t *testing.T) {
	limits := specPath.Child("limits")
	one := func(l v1alpha1.EventRateLimitLimit) *v1alpha1.EventRateLimitSpec {
		return &v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{l}}
	}
	cases := []struct {
		name string
		spec *v1alpha1.EventRateLimitSpec
		want field.ErrorList
	}{
		{"valid: the seed's example", &v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
			{Type: v1alpha1.EventRateLimitServer, QPS: 100, Burst: 1000},
			{Type: v1alpha1.EventRateLimitNamespace, QPS: 10, Burst: 100, CacheSize: ptr.To[int32](50)},
			{Type: v1alpha1.EventRateLimitUser, QPS: 1, Burst: 1, CacheSize: ptr.To[int32](0)},
			{Type: v1alpha1.EventRateLimitSourceAndObject, QPS: 1, Burst: 1},
		}}, nil},
		{"nil spec", nil, field.ErrorList{field.Required(limits, "at least one limit is required")}},
		{"no limits", &v1alpha1.EventRateLimitSpec{}, field.ErrorList{field.Required(limits, "at least one limit is required")}},
		{"duplicate type", &v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
			{Type: v1alpha1.EventRateLimitUser, QPS: 1, Burst: 1},
			{Type: v1alpha1.EventRateLimitUser, QPS: 2, Burst: 2},
		}}, field.ErrorList{field.Duplicate(limits.Index(1).Child("type"), v1alpha1.EventRateLimitUser)}},
		{"unknown type (the seed's lower-case spelling)", one(v1alpha1.EventRateLimitLimit{Type: "sourceAndObject", QPS: 1, Burst: 1}),
			field.ErrorList{field.NotSupported(limits.Index(0).Child("type"), v1alpha1.EventRateLimitType("sourceAndObject"), v1alpha1.EventRateLimitTypes)}},
		{"zero qps", one(v1alpha1.EventRateLimitLimit{Type: v1alpha1.EventRateLimitServer, QPS: 0, Burst: 1}),
			field.ErrorList{field.Invalid(limits.Index(0).Child("qps"), int32(0), "must be positive")}},
		{"negative qps", one(v1alpha1.EventRateLimitLimit{Type: v1alpha1.EventRateLimitServer, QPS: -1, Burst: 1}),
			field.ErrorList{field.Invalid(limits.Index(0).Child("qps"), int32(-1), "must be positive")}},
		{"zero burst", one(v1alpha1.EventRateLimitLimit{Type: v1alpha1.EventRateLimitNamespace, QPS: 1, Burst: 0}),
			field.ErrorList{field.Invalid(limits.Index(0).Child("burst"), int32(0), "must be positive")}},
		{"negative cacheSize", one(v1alpha1.EventRateLimitLimit{Type: v1alpha1.EventRateLimitNamespace, QPS: 1, Burst: 1, CacheSize: ptr.To[int32](-1)}),
			field.ErrorList{field.Invalid(limits.Index(0).Child("cacheSize"), int32(-1), "must not be negative")}},
		{"every rule of one limit at once", one(v1alpha1.EventRateLimitLimit{Type: "Cluster", QPS: -5, Burst: -6, CacheSize: ptr.To[int32](-7)}),
			field.ErrorList{
				field.NotSupported(limits.Index(0).Child("type"), v1alpha1.EventRateLimitType("Cluster"), v1alpha1.EventRateLimitTypes),
				field.Invalid(limits.Index(0).Child("qps"), int32(-5), "must be positive"),
				field.Invalid(limits.Index(0).Child("burst"), int32(-6), "must be positive"),
				field.Invalid(limits.Index(0).Child("cacheSize"), int32(-7), "must not be negative"),
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			matcher.Test(t, c.want, EventRateLimitSpec(c.spec, specPath))
		})
	}
}
