package validation

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// recorded is fs with the record of exempt rights.
func recorded(fs *v1alpha1.FlowSchema) *v1alpha1.FlowSchema {
	fs.Annotations = map[string]string{v1alpha1.AnnotationExemptAuthorized: "true"}
	return fs
}

// TestExemptAccessSystemTopAndRecord: a FlowSchema that refers to system-top needs exempt
// rights even while system-top does not exist (the back door: the defaults re-create it at
// level 0), and so does one that carries the record of exempt rights, before or after the
// update; the webhook agrees with kube-apiserver's ValidatingAdmissionPolicy.
func TestExemptAccessSystemTopAndRecord(t *testing.T) {
	ctx := context.Background()
	access := DefaultExemptAccess("system:serviceaccount:apf-system:apf-operator")
	dev := authenticationv1.UserInfo{Username: "dev", Groups: []string{"system:authenticated"}}
	admin := authenticationv1.UserInfo{Username: "root", Groups: []string{MastersGroup}}
	// Another level-0 RequestPriority replaced system-top, which does not exist.
	others := NewSet([]*v1alpha1.RequestPriority{rpObj("admin-top", v1alpha1.RequestPrioritySpec{}), rpObj("q", queued(500))}, nil)
	for _, c := range []struct {
		name     string
		user     authenticationv1.UserInfo
		old, obj *v1alpha1.FlowSchema
		field    string // "" when allowed
	}{
		{"system-top missing", dev, nil, fsTo("t", v1alpha1.SystemTopName, false), "spec.requestPriority.name"},
		{"update away from system-top", dev, fsTo("t", v1alpha1.SystemTopName, false), fsTo("t", "q", false), "spec.requestPriority.name"},
		{"record set", dev, nil, recorded(fsTo("t", "q", false)), "metadata.annotations[flowcontrol.apf-operator.io/exempt-authorized]"},
		{"record kept on update", dev, recorded(fsTo("t", "q", false)), fsTo("t", "q", false), "metadata.annotations[flowcontrol.apf-operator.io/exempt-authorized]"},
		{"queued level", dev, nil, fsTo("t", "q", false), ""},
		{"admin sets the record on system-top", admin, nil, recorded(fsTo("t", v1alpha1.SystemTopName, false)), ""},
	} {
		got, err := access.FlowSchema(ctx, c.user, c.old, c.obj, others)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch {
		case c.field == "" && len(got) > 0:
			t.Errorf("%s: refused: %v", c.name, got)
		case c.field != "" && (len(got) != 1 || got[0].Field != c.field):
			t.Errorf("%s: got %v, want one Forbidden on %s", c.name, got, c.field)
		}
	}
}

// TestExemptAccessDeleteAgreesWithPolicy: deleting a FlowSchema with the record, or one that
// refers to the missing system-top, needs exempt rights too, as kube-apiserver's policy says.
func TestExemptAccessDeleteAgreesWithPolicy(t *testing.T) {
	ctx := context.Background()
	access := DefaultExemptAccess()
	dev := authenticationv1.UserInfo{Username: "dev"}
	others := NewSet([]*v1alpha1.RequestPriority{rpObj("q", queued(500))}, nil)
	for _, c := range []struct {
		obj   *v1alpha1.FlowSchema
		field string // "" when allowed
	}{
		{recorded(fsTo("r", "q", false)), "metadata.annotations[flowcontrol.apf-operator.io/exempt-authorized]"},
		{fsTo("t", v1alpha1.SystemTopName, false), "spec.requestPriority.name"},
		{fsTo("q", "q", false), ""},
	} {
		got, err := access.FlowSchemaDelete(ctx, dev, c.obj, others)
		if err != nil {
			t.Fatal(err)
		}
		if (c.field == "") != (len(got) == 0) || (c.field != "" && got[0].Field != c.field) {
			t.Errorf("delete %s: got %v, want a Forbidden on %q (\"\": allowed)", c.obj.Name, got, c.field)
		}
	}
}
