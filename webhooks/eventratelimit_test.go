package webhooks

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// eventRateLimitCases break each of seed 001's rules once; paths are the fields the CRD, the
// webhook and `validate` must all name.
func eventRateLimitCases() []struct {
	name  string
	spec  v1alpha1.EventRateLimitSpec
	paths []string
} {
	lim := func(l ...v1alpha1.EventRateLimitLimit) v1alpha1.EventRateLimitSpec {
		return v1alpha1.EventRateLimitSpec{Limits: l}
	}
	return []struct {
		name  string
		spec  v1alpha1.EventRateLimitSpec
		paths []string
	}{
		{"no limits", lim(), []string{"spec.limits"}},
		{"duplicate type", lim(v1alpha1.EventRateLimitLimit{Type: "User", QPS: 1, Burst: 1}, v1alpha1.EventRateLimitLimit{Type: "User", QPS: 2, Burst: 2}),
			[]string{"spec.limits[1]"}},
		{"unknown type", lim(v1alpha1.EventRateLimitLimit{Type: "sourceAndObject", QPS: 1, Burst: 1}), []string{"spec.limits[0].type"}},
		{"qps not positive", lim(v1alpha1.EventRateLimitLimit{Type: "Server", QPS: 0, Burst: 1}), []string{"spec.limits[0].qps"}},
		{"burst not positive", lim(v1alpha1.EventRateLimitLimit{Type: "Server", QPS: 1, Burst: -1}), []string{"spec.limits[0].burst"}},
		{"negative cacheSize", lim(v1alpha1.EventRateLimitLimit{Type: "Namespace", QPS: 1, Burst: 1, CacheSize: ptr.To[int32](-1)}),
			[]string{"spec.limits[0].cacheSize"}},
	}
}

// TestEventRateLimitRulesEverywhere: for every rule, the Go rules (the webhook's), the webhook's
// answer and the API server's answer (the CRD's schema and CEL, which reject before any webhook)
// name the same field; a valid object is admitted by both.
func TestEventRateLimitRulesEverywhere(t *testing.T) {
	s := envSuite(t)
	v := &EventRateLimitValidator{}
	for _, c := range eventRateLimitCases() {
		t.Run(c.name, func(t *testing.T) {
			obj := &v1alpha1.EventRateLimit{ObjectMeta: metav1.ObjectMeta{Name: "erl-rules"}, Spec: c.spec}
			goErrs := validation.EventRateLimitSpec(&obj.Spec, field.NewPath("spec"))
			_, webhookErr := v.ValidateCreate(context.Background(), obj)
			apiErr := s.admin.Create(context.Background(), obj, client.DryRunAll)
			for _, p := range c.paths {
				if !hasPath(goErrs, p) {
					t.Errorf("Go rules %v do not name %s", goErrs, p)
				}
				if !causeNamed(webhookErr, p) {
					t.Errorf("webhook answer %v does not name %s", webhookErr, p)
				}
				if !causeNamed(apiErr, p) {
					t.Errorf("API server answer %v does not name %s", apiErr, p)
				}
			}
		})
	}
	valid := &v1alpha1.EventRateLimit{ObjectMeta: metav1.ObjectMeta{Name: "erl-valid"}, Spec: v1alpha1.EventRateLimitSpec{
		Limits: []v1alpha1.EventRateLimitLimit{{Type: "Server", QPS: 100, Burst: 1000}, {Type: "SourceAndObject", QPS: 1, Burst: 5}}}}
	if _, err := v.ValidateCreate(context.Background(), valid); err != nil {
		t.Fatalf("webhook rejects a valid object: %v", err)
	}
	if err := s.admin.Create(context.Background(), valid, client.DryRunAll); err != nil {
		t.Fatalf("API server rejects a valid object: %v", err)
	}
}

func hasPath(errs field.ErrorList, p string) bool {
	for _, e := range errs {
		if e.Field == p || strings.HasPrefix(e.Field, p+".") {
			return true
		}
	}
	return false
}

// causeNamed reports whether a status error has a cause on field p (or below it).
func causeNamed(err error, p string) bool {
	var se apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	for _, c := range se.Status().Details.Causes {
		if c.Field == p || strings.HasPrefix(c.Field, p+".") {
			return true
		}
	}
	return false
}
