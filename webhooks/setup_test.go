package webhooks

import (
	"reflect"
	"testing"

	"github.com/apf-operator/apf-operator/internal/validation"
)

func TestExemptAccessFromOptions(t *testing.T) {
	self := "system:serviceaccount:apf-system:apf-operator"
	cases := []struct {
		name string
		opts Options
		self string
		want validation.ExemptAccess
	}{
		{"defaults", Options{}, self, validation.ExemptAccess{Groups: []string{"system:masters"}, Users: []string{self}}},
		{"configured groups replace the default", Options{ExemptGroups: []string{"platform-admins"}, ExemptUsers: []string{"alice"}},
			self, validation.ExemptAccess{Groups: []string{"platform-admins"}, Users: []string{"alice", self}}},
		{"self listed once", Options{ExemptUsers: []string{self}}, self,
			validation.ExemptAccess{Groups: []string{"system:masters"}, Users: []string{self}}},
		{"self unknown", Options{ExemptUsers: []string{"alice"}}, "",
			validation.ExemptAccess{Groups: []string{"system:masters"}, Users: []string{"alice"}}},
	}
	for _, c := range cases {
		if got := exemptAccess(c.opts, c.self); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: exemptAccess = %+v, want %+v", c.name, got, c.want)
		}
	}
}
