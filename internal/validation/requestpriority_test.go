package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// matcher compares error lists by type, path, bad value and a substring of the detail (the
// fix each message must name).
var matcher = field.ErrorMatcher{}.ByType().ByField().ByValue().ByDetailSubstring()

var specPath = field.NewPath("spec")

// queued returns a valid non-exempt spec to derive cases from.
func queued(level int32) v1alpha1.RequestPrioritySpec {
	return v1alpha1.RequestPrioritySpec{
		PriorityLevel:            level,
		AssuredConcurrencyShares: ptr.To[int32](10),
		QueuesPerWidth:           ptr.To[int32](128),
		HandSize:                 ptr.To[int32](6),
		QueueLengthLimit:         ptr.To[int32](100),
	}
}

func TestRequestPrioritySpec(t *testing.T) {
	with := func(mutate func(*v1alpha1.RequestPrioritySpec)) *v1alpha1.RequestPrioritySpec {
		s := queued(1000)
		mutate(&s)
		return &s
	}
	cases := []struct {
		name string
		spec *v1alpha1.RequestPrioritySpec
		want field.ErrorList
	}{
		{"valid queued level", with(func(*v1alpha1.RequestPrioritySpec) {}), nil},
		{"valid exempt level", &v1alpha1.RequestPrioritySpec{PriorityLevel: 0}, nil},
		{"valid single queue without hand", with(func(s *v1alpha1.RequestPrioritySpec) {
			s.QueuesPerWidth, s.HandSize = ptr.To[int32](1), nil
		}), nil},
		{"valid zero shares", with(func(s *v1alpha1.RequestPrioritySpec) { s.AssuredConcurrencyShares = ptr.To[int32](0) }), nil},
		{"valid largest hand below 2^60", with(func(s *v1alpha1.RequestPrioritySpec) {
			s.QueuesPerWidth, s.HandSize = ptr.To[int32](64), ptr.To[int32](10)
		}), nil},
		{"nil spec", nil, field.ErrorList{field.Required(specPath, "set at least priorityLevel")}},
		{"negative level", &v1alpha1.RequestPrioritySpec{PriorityLevel: -1}, field.ErrorList{
			field.Invalid(specPath.Child("priorityLevel"), int32(-1), "between 0 (the exempt level) and 1000000000")}},
		{"level above range", with(func(s *v1alpha1.RequestPrioritySpec) { s.PriorityLevel = MaxPriorityLevel + 1 }), field.ErrorList{
			field.Invalid(specPath.Child("priorityLevel"), int32(MaxPriorityLevel+1), "between 0")}},
		{"exempt level with queuing fields", with(func(s *v1alpha1.RequestPrioritySpec) { s.PriorityLevel = 0 }), field.ErrorList{
			field.Forbidden(specPath.Child("assuredConcurrencyShares"), "remove assuredConcurrencyShares, or use a priorityLevel above 0"),
			field.Forbidden(specPath.Child("queuesPerWidth"), "remove queuesPerWidth"),
			field.Forbidden(specPath.Child("handSize"), "remove handSize"),
			field.Forbidden(specPath.Child("queueLengthLimit"), "remove queueLengthLimit"),
		}},
		{"queued level without fields", &v1alpha1.RequestPrioritySpec{PriorityLevel: 5}, field.ErrorList{
			field.Required(specPath.Child("assuredConcurrencyShares"), "required when priorityLevel > 0"),
			field.Required(specPath.Child("queuesPerWidth"), "for example 64"),
			field.Required(specPath.Child("queueLengthLimit"), "for example 50"),
		}},
		{"negative shares", with(func(s *v1alpha1.RequestPrioritySpec) { s.AssuredConcurrencyShares = ptr.To[int32](-1) }), field.ErrorList{
			field.Invalid(specPath.Child("assuredConcurrencyShares"), int32(-1), "between 0 and 100000")}},
		{"zero queues", with(func(s *v1alpha1.RequestPrioritySpec) { s.QueuesPerWidth = ptr.To[int32](0) }), field.ErrorList{
			field.Invalid(specPath.Child("queuesPerWidth"), int32(0), "between 1 and 4096")}},
		{"too many queues", with(func(s *v1alpha1.RequestPrioritySpec) { s.QueuesPerWidth = ptr.To[int32](4097) }), field.ErrorList{
			field.Invalid(specPath.Child("queuesPerWidth"), int32(4097), "between 1 and 4096")}},
		{"zero queue length limit", with(func(s *v1alpha1.RequestPrioritySpec) { s.QueueLengthLimit = ptr.To[int32](0) }), field.ErrorList{
			field.Invalid(specPath.Child("queueLengthLimit"), int32(0), "between 1 and 100000")}},
		{"hand size missing", with(func(s *v1alpha1.RequestPrioritySpec) { s.HandSize = nil }), field.ErrorList{
			field.Required(specPath.Child("handSize"), "required when queuesPerWidth > 1")}},
		{"hand size with one queue", with(func(s *v1alpha1.RequestPrioritySpec) { s.QueuesPerWidth = ptr.To[int32](1) }), field.ErrorList{
			field.Forbidden(specPath.Child("handSize"), "remove handSize or raise queuesPerWidth")}},
		{"zero hand size", with(func(s *v1alpha1.RequestPrioritySpec) { s.HandSize = ptr.To[int32](0) }), field.ErrorList{
			field.Invalid(specPath.Child("handSize"), int32(0), "between 1 and 64")}},
		{"hand larger than queues", with(func(s *v1alpha1.RequestPrioritySpec) {
			s.QueuesPerWidth, s.HandSize = ptr.To[int32](4), ptr.To[int32](5)
		}), field.ErrorList{field.Invalid(specPath.Child("handSize"), int32(5), "must not exceed queuesPerWidth (4)")}},
		{"hand over the 2^60 limit", with(func(s *v1alpha1.RequestPrioritySpec) {
			s.QueuesPerWidth, s.HandSize = ptr.To[int32](64), ptr.To[int32](12)
		}), field.ErrorList{field.Invalid(specPath.Child("handSize"), int32(12),
			"ff(queuesPerWidth=64, handSize=12) = 1573144097507348889600 >= 2^60 = 1152921504606846976; lower handSize (at most 10 with queuesPerWidth 64) or queuesPerWidth")}},
		{"hand of 64 over 4096 queues", with(func(s *v1alpha1.RequestPrioritySpec) {
			s.QueuesPerWidth, s.HandSize, s.QueueLengthLimit = ptr.To[int32](4096), ptr.To[int32](64), ptr.To[int32](8)
		}), field.ErrorList{field.Invalid(specPath.Child("handSize"), int32(64), "ff(queuesPerWidth=4096, handSize=64)")}},
		{"valid lending and borrowing", with(func(s *v1alpha1.RequestPrioritySpec) {
			s.LendablePercent, s.BorrowingLimitPercent = ptr.To[int32](100), ptr.To[int32](250)
		}), nil},
		{"lendable percent out of range", with(func(s *v1alpha1.RequestPrioritySpec) {
			s.LendablePercent, s.BorrowingLimitPercent = ptr.To[int32](101), ptr.To[int32](-1)
		}), field.ErrorList{
			field.Invalid(specPath.Child("lendablePercent"), int32(101), "between 0 and 100"),
			field.Invalid(specPath.Child("borrowingLimitPercent"), int32(-1), "between 0 and 1000000"),
		}},
		{"exempt level with borrowing fields", &v1alpha1.RequestPrioritySpec{PriorityLevel: 0,
			LendablePercent: ptr.To[int32](10), BorrowingLimitPercent: ptr.To[int32](10)}, field.ErrorList{
			field.Forbidden(specPath.Child("lendablePercent"), "remove lendablePercent, or use a priorityLevel above 0"),
			field.Forbidden(specPath.Child("borrowingLimitPercent"), "remove borrowingLimitPercent"),
		}},
		{"hand judged only with valid queues", with(func(s *v1alpha1.RequestPrioritySpec) {
			s.QueuesPerWidth, s.HandSize = ptr.To[int32](-3), ptr.To[int32](90)
		}), field.ErrorList{field.Invalid(specPath.Child("queuesPerWidth"), int32(-3), "between 1 and 4096")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			matcher.Test(t, c.want, RequestPrioritySpec(c.spec, specPath))
		})
	}
}

func TestRequestPriorityUpdate(t *testing.T) {
	old, same, moved := queued(1000), queued(1000), queued(2000)
	same.QueuesPerWidth = ptr.To[int32](1)
	if errs := RequestPriorityUpdate(&old, &same, specPath); len(errs) != 0 {
		t.Errorf("update keeping the level: %v", errs)
	}
	matcher.Test(t, field.ErrorList{field.Invalid(specPath.Child("priorityLevel"), int32(2000),
		"priorityLevel is immutable (it is 1000): delete the RequestPriority and create it again with the new level")},
		RequestPriorityUpdate(&old, &moved, specPath))
}

func TestAcceptsDistinguisher(t *testing.T) {
	one := queued(5)
	one.QueuesPerWidth = ptr.To[int32](1)
	many := queued(5)
	for _, c := range []struct {
		spec v1alpha1.RequestPrioritySpec
		want bool
	}{{v1alpha1.RequestPrioritySpec{}, false}, {one, false}, {many, true}} {
		if got := AcceptsDistinguisher(&c.spec); got != c.want {
			t.Errorf("AcceptsDistinguisher(%+v) = %v, want %v", c.spec, got, c.want)
		}
	}
}
