package validation

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestExemptReferrers(t *testing.T) {
	ctx := context.Background()
	exempt := v1alpha1.RequestPrioritySpec{}
	levelPath := specPath.Child("priorityLevel")
	refused := func(detail string) field.ErrorList {
		return field.ErrorList{field.Forbidden(levelPath, detail)}
	}
	many := make([]*v1alpha1.FlowSchema, 0, 8)
	for i := 7; i >= 0; i-- {
		many = append(many, fsTo(fmt.Sprintf("team-%d", i), "foo", false))
	}
	for _, c := range []struct {
		name string
		old  *v1alpha1.RequestPriority
		obj  *v1alpha1.RequestPriority
		rps  []*v1alpha1.RequestPriority
		fss  []*v1alpha1.FlowSchema
		want field.ErrorList
	}{
		{name: "no referrer", obj: rpObj("foo", exempt)},
		{name: "a referrer and a non-exempt level", obj: rpObj("foo", queued(500)),
			fss: []*v1alpha1.FlowSchema{fsTo("team-a", "foo", false)}},
		{name: "only recorded referrers", obj: rpObj("foo", exempt),
			fss: []*v1alpha1.FlowSchema{recorded(fsTo("system-top", "foo", false)), recorded(fsTo("team-x", "foo", false))}},
		{name: "a reserved name is no record", obj: rpObj("foo", exempt),
			fss:  []*v1alpha1.FlowSchema{fsTo("system-x", "foo", false)},
			want: refused(`FlowSchema "system-x" refer(s)`)},
		{name: "a referrer of another name", obj: rpObj("foo", exempt),
			fss: []*v1alpha1.FlowSchema{fsTo("team-a", "bar", false)}},
		{name: "create with a referrer", obj: rpObj("foo", exempt),
			fss: []*v1alpha1.FlowSchema{recorded(fsTo("system-top", "foo", false)), fsTo("team-a", "foo", false)},
			want: refused(`FlowSchema "team-a" refer(s) to RequestPriority "foo" and would become exempt at level 0 ` +
				`although nothing records that their authors may configure the exempt level: have an exempt-allowed ` +
				`user set the annotation flowcontrol.apf-operator.io/exempt-authorized: "true" on them`)},
		{name: "five named and how many more", obj: rpObj("foo", exempt), fss: many,
			want: refused(`FlowSchema "team-0", "team-1", "team-2", "team-3", "team-4" and 3 more refer(s)`)},
		{name: "update from a non-zero level", old: rpObj("foo", queued(500)), obj: rpObj("foo", exempt),
			rps: []*v1alpha1.RequestPriority{rpObj("foo", queued(500))},
			fss: []*v1alpha1.FlowSchema{fsTo("team-a", "foo", false)}, want: refused(`FlowSchema "team-a" refer(s)`)},
		{name: "update at level 0", old: rpObj("foo", exempt), obj: rpObj("foo", exempt),
			rps: []*v1alpha1.RequestPriority{rpObj("foo", exempt)},
			fss: []*v1alpha1.FlowSchema{fsTo("team-a", "foo", false)}},
		{name: "the backstop name while it is exempt already", obj: rpObj(BackstopExemptName, exempt),
			fss: []*v1alpha1.FlowSchema{fsTo("team-a", BackstopExemptName, false)}},
		{name: "the backstop name while another level 0 exists", obj: rpObj(BackstopExemptName, exempt),
			rps:  []*v1alpha1.RequestPriority{rpObj("top", exempt)},
			fss:  []*v1alpha1.FlowSchema{fsTo("team-a", BackstopExemptName, false)},
			want: refused(`FlowSchema "team-a" refer(s) to RequestPriority "system-top"`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ExemptReferrers(ctx, c.old, c.obj, NewSet(c.rps, c.fss))
			if err != nil {
				t.Fatal(err)
			}
			matcher.Test(t, c.want, got)
		})
	}
}
