package validation

import (
	"testing"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestMastersOnly(t *testing.T) {
	and := func(tests ...v1alpha1.AtomicTest) v1alpha1.Conjunction { return v1alpha1.Conjunction{And: tests} }
	mastersTest := v1alpha1.AtomicTest{SuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{MastersGroup}}}
	other := v1alpha1.AtomicTest{SuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{"system:nodes"}}}
	both := v1alpha1.AtomicTest{SuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{"a", MastersGroup}}}
	negated := v1alpha1.AtomicTest{NotSuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{MastersGroup}}}
	for _, tc := range []struct {
		name  string
		match []v1alpha1.Conjunction
		want  bool
	}{
		{"no conjunction", nil, false},
		{"everything", []v1alpha1.Conjunction{and()}, false},
		{"masters", []v1alpha1.Conjunction{and(mastersTest)}, true},
		{"masters among other groups", []v1alpha1.Conjunction{and(other, both)}, true},
		{"another group", []v1alpha1.Conjunction{and(other)}, false},
		{"not masters", []v1alpha1.Conjunction{and(negated)}, false},
		{"one conjunction without masters", []v1alpha1.Conjunction{and(mastersTest), and(other)}, false},
	} {
		if got := MastersOnly(tc.match); got != tc.want {
			t.Errorf("%s: MastersOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}
