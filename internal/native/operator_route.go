package native

import (
	"fmt"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// The operator's own route: one owned native FlowSchema that takes every request of the
// operator's service account ahead of every projected schema, so that a configuration that
// starves the user levels cannot slow the operator's repair of it. It refers to a level
// kube-apiserver already has (no new shares, so nothing taken from any other level).
const (
	// OperatorRouteName is the route's native name: the "apf." form no API object's
	// projection takes (names.go).
	OperatorRouteName = backstopPrefix + "operator"
	// KindOperator is the source kind of the route: its source annotation is
	// "Operator/<namespace>/<service account>".
	KindOperator = "Operator"
)

// OperatorRouteLevels are the kube-apiserver levels the route may refer to, preferred first:
// workload-high, where kube-apiserver's suggested configuration serves kube-controller-manager
// and kube-scheduler, else global-default.
var OperatorRouteLevels = []string{"workload-high", "global-default"}

// ServiceAccount names the operator's own service account.
type ServiceAccount struct {
	Namespace, Name string
}

// Username is the service account's user name, system:serviceaccount:<namespace>:<name>.
func (sa ServiceAccount) Username() string {
	return "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
}

// projectOperatorRoute adds the route for sa to the plan, or records why there is none; a nil
// sa (the service account is unknown, as under `make run`) means no route.
func (pr *projector) projectOperatorRoute(sa *ServiceAccount, levels []flowcontrolv1.PriorityLevelConfiguration) {
	if sa == nil {
		pr.plan.OperatorRoute = Result{Message: "no operator route: the operator's service account is unknown " +
			"(set --namespace and --service-account, or POD_NAMESPACE and SERVICE_ACCOUNT_NAME)"}
		return
	}
	if msg := invalidServiceAccount(sa); msg != "" {
		pr.plan.OperatorRoute = Result{Reason: flowv1.ReasonNotExpressible, Message: msg}
		return
	}
	if res, conflict := pr.conflict(pr.fss[OperatorRouteName], "FlowSchema", OperatorRouteName, ""); conflict {
		pr.plan.OperatorRoute = res
		return
	}
	level := operatorRouteLevel(levels)
	if level == "" {
		pr.plan.OperatorRoute = Result{Reason: flowv1.ReasonRequestPriorityNotProjected, Message: fmt.Sprintf(
			"no operator route: kube-apiserver has none of the levels %s (its suggested configuration is off?); "+
				"the operator's requests go wherever the other schemas send them",
			strings.Join(OperatorRouteLevels, ", "))}
		return
	}
	pr.plan.FlowSchemas = append(pr.plan.FlowSchemas, operatorRoute(sa, level, pr.plan.FirstPrecedence-1))
	pr.plan.OperatorRoute = Result{Projected: true, Reason: flowv1.ReasonProjected, NativeName: OperatorRouteName,
		Message: fmt.Sprintf("the requests of %s are routed by FlowSchema %s to kube-apiserver's level %s, "+
			"ahead of every projected schema", sa.Username(), OperatorRouteName, level)}
}

// invalidServiceAccount says why kube-apiserver would refuse sa in a subject; "" when it would not.
func invalidServiceAccount(sa *ServiceAccount) string {
	if errs := validation.IsDNS1123Label(sa.Namespace); len(errs) > 0 {
		return fmt.Sprintf("no operator route: namespace %q is not a DNS label: %s", sa.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(sa.Name); len(errs) > 0 {
		return fmt.Sprintf("no operator route: service account %q is not a DNS subdomain: %s", sa.Name, strings.Join(errs, "; "))
	}
	return ""
}

// operatorRouteLevel is the first of OperatorRouteLevels that kube-apiserver has (not one of
// ours), or "".
func operatorRouteLevel(levels []flowcontrolv1.PriorityLevelConfiguration) string {
	have := map[string]bool{}
	for i := range levels {
		if l := &levels[i]; !Owned(l) && l.Spec.Type == flowcontrolv1.PriorityLevelEnablementLimited {
			have[l.Name] = true
		}
	}
	for _, name := range OperatorRouteLevels {
		if have[name] {
			return name
		}
	}
	return ""
}

// operatorRoute is the route's native FlowSchema: every request of sa, resource (every verb,
// group, resource, namespace and cluster scope) or not (every verb and path), one flow per user,
// at precedence: after the cluster's own control-plane schemas and ahead of every projected one
// (Plan.FirstPrecedence-1).
func operatorRoute(sa *ServiceAccount, level string, precedence int32) flowcontrolv1.FlowSchema {
	all := []string{flowcontrolv1.VerbAll}
	return flowcontrolv1.FlowSchema{
		TypeMeta:   typeMeta("FlowSchema"),
		ObjectMeta: ownedMeta(OperatorRouteName, KindOperator, sa.Namespace+"/"+sa.Name),
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         precedence,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: sa.Namespace, Name: sa.Name}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: all, APIGroups: []string{flowcontrolv1.APIGroupAll},
					Resources: []string{flowcontrolv1.ResourceAll}, ClusterScope: true,
					Namespaces: []string{flowcontrolv1.NamespaceEvery}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: all,
					NonResourceURLs: []string{flowcontrolv1.NonResourceAll}}},
			}},
		},
	}
}
