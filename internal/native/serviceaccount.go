package native

import (
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// serviceAccountPrefix starts the user name of every service account (k8s.io/apiserver's
// serviceaccount.ServiceAccountUsernamePrefix).
const serviceAccountPrefix = "system:serviceaccount:"

// serviceAccountWildcard recognises the user tests of a conjunction that accept exactly the
// service accounts of one namespace: a single patternMatch on user of the form
// "system:serviceaccount:<namespace>:.*", which is what `apf-operator import` writes for a
// native serviceAccount {namespace: <namespace>, name: "*"} subject. It returns that subject.
// kube-apiserver accepts every user name with that prefix; the pattern's "." does not match a
// newline, which no Kubernetes user name of a service account holds.
func serviceAccountWildcard(users []*test) (flowcontrolv1.Subject, bool) {
	if len(users) != 1 || !users[0].isPattern || users[0].negate {
		return flowcontrolv1.Subject{}, false
	}
	rest, ok := strings.CutPrefix(users[0].pattern, serviceAccountPrefix)
	if !ok {
		return flowcontrolv1.Subject{}, false
	}
	ns, ok := strings.CutSuffix(rest, ":.*")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 {
		return flowcontrolv1.Subject{}, false
	}
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
		ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: flowcontrolv1.NameAll}}, true
}

// saWildcardSubjects is subjects' case for a namespace's service accounts, with no group test.
func (c *conjunction) saWildcardSubjects() ([]flowcontrolv1.Subject, bool) {
	if len(c.byField[flowv1.FieldGroups]) > 0 {
		return nil, false
	}
	s, ok := serviceAccountWildcard(c.byField[flowv1.FieldUser])
	if !ok {
		return nil, false
	}
	return []flowcontrolv1.Subject{s}, true
}
