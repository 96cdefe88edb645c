// Package crd proves, against a real kube-apiserver, that the generated CRDs enforce every
// stateless rule by themselves (CEL and OpenAPI validation), so the rules hold while no webhook
// answers, and that the default objects and the samples are accepted.
package crd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

var k8s client.Client

func TestMain(m *testing.M) {
	harness.Main(m, &harness.Suite{
		Name:         "crd",
		ControlPlane: &harness.ControlPlane{NoWebhooks: true},
		Ready: func(s *harness.Suite) error {
			k8s = s.Client
			return nil
		},
	})
}

// object decodes a YAML manifest into an unstructured object, so a case can hold what the typed
// API cannot express (missing required fields, unknown enum values).
func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("bad test manifest: %v", err)
	}
	return u
}

const rpHeader = "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: %s}\n"
const fsHeader = "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\nmetadata: {name: %s}\n"

func rp(name, spec string) string { return strings.Replace(rpHeader, "%s", name, 1) + "spec: " + spec }
func fs(name, spec string) string { return strings.Replace(fsHeader, "%s", name, 1) + "spec: " + spec }

// fsSpec builds a FlowSchema spec with one conjunction holding the given atomic test.
func fsSpec(test string) string {
	return "{matchingPriority: 100, requestPriority: {name: x}, match: [{and: [" + test + "]}]}"
}

func TestCRDRejectsInvalidObjects(t *testing.T) {
	long := strings.Repeat("a", 513)
	cases := []struct {
		name, manifest, want string
	}{
		{"exempt level with queuing fields", rp("c1", "{priorityLevel: 0, queuesPerWidth: 4, handSize: 2}"),
			"spec.handSize: Forbidden: priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove handSize"},
		{"exempt level with shares", rp("c2", "{priorityLevel: 0, assuredConcurrencyShares: 5}"),
			"spec.assuredConcurrencyShares: Forbidden: priorityLevel 0 is the exempt level and takes no queuing or borrowing fields"},
		{"level needs shares", rp("c3", "{priorityLevel: 10, queuesPerWidth: 1, queueLengthLimit: 5}"),
			"spec.assuredConcurrencyShares: Required value: required when priorityLevel > 0"},
		{"level needs queues", rp("c4", "{priorityLevel: 10, assuredConcurrencyShares: 1, queueLengthLimit: 5}"),
			"spec.queuesPerWidth: Required value: required when priorityLevel > 0"},
		{"level needs queue limit", rp("c5", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 1}"),
			"spec.queueLengthLimit: Required value: required when priorityLevel > 0"},
		{"hand size required", rp("c6", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 8, queueLengthLimit: 5}"),
			"spec.handSize: Required value: required when queuesPerWidth > 1"},
		{"hand size with one queue", rp("c7", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 1, handSize: 1, queueLengthLimit: 5}"),
			"spec.handSize: Forbidden: allowed only when queuesPerWidth > 1"},
		{"hand larger than queues", rp("c8", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 4, handSize: 5, queueLengthLimit: 5}"),
			"spec.handSize: Invalid value: must not exceed queuesPerWidth"},
		{"negative level", rp("c9", "{priorityLevel: -1}"), "spec.priorityLevel: Invalid value: -1: spec.priorityLevel in body should be greater than or equal to 0"},
		{"level too high", rp("c10", "{priorityLevel: 1000000001}"), "should be less than or equal to 1000000000"},
		{"too many queues", rp("c11", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 4097, handSize: 2, queueLengthLimit: 5}"),
			"spec.queuesPerWidth in body should be less than or equal to 4096"},
		{"zero queue limit", rp("c12", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 0}"),
			"spec.queueLengthLimit in body should be greater than or equal to 1"},
		{"shares too high", rp("c13", "{priorityLevel: 10, assuredConcurrencyShares: 100001, queuesPerWidth: 1, queueLengthLimit: 1}"),
			"spec.assuredConcurrencyShares in body should be less than or equal to 100000"},
		{"hand size too high", rp("c14", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 100, handSize: 65, queueLengthLimit: 1}"),
			"spec.handSize in body should be less than or equal to 64"},
		{"missing level", rp("c15", "{assuredConcurrencyShares: 1}"), "spec.priorityLevel: Required value"},
		{"exempt level lending", rp("c16", "{priorityLevel: 0, lendablePercent: 10}"),
			"spec.lendablePercent: Forbidden: priorityLevel 0 is the exempt level and takes no queuing or borrowing fields"},
		{"lendable over 100", rp("c17", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1, lendablePercent: 101}"),
			"spec.lendablePercent: Invalid value: 101: spec.lendablePercent in body should be less than or equal to 100"},
		{"negative borrowing limit", rp("c18", "{priorityLevel: 10, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1, borrowingLimitPercent: -1}"),
			"spec.borrowingLimitPercent in body should be greater than or equal to 0"},

		{"bound at the exempt level", rp("c19", "{priorityLevel: 0, nativeLevel: workload-high}"),
			"spec.nativeLevel: Forbidden: priorityLevel 0 is already bound to kube-apiserver's exempt level"},
		{"bound and carved", rp("c20", "{priorityLevel: 10, nativeLevel: workload-high, sharesFrom: workload-low}"),
			"spec.sharesFrom: Forbidden: a bound level adds no shares, so it takes none from a donor"},
		{"bound with autopilot", rp("c21", "{priorityLevel: 10, nativeLevel: workload-high, assuredConcurrencyShares: 10, autopilot: {minShares: 5, maxShares: 20}}"),
			"spec.autopilot: Forbidden: the autopilot never moves a bound level's shares"},
		{"bound with a hand and no queues", rp("c22", "{priorityLevel: 10, nativeLevel: workload-high, handSize: 4}"),
			"spec.handSize: Forbidden: allowed only when queuesPerWidth > 1"},
		{"carved with 0 shares", rp("c23", "{priorityLevel: 10, sharesFrom: workload-low, assuredConcurrencyShares: 0, queuesPerWidth: 1, queueLengthLimit: 1}"),
			"spec.assuredConcurrencyShares: Invalid value: must be above 0 with sharesFrom"},
		{"unbound needs shares", rp("c24", "{priorityLevel: 10, queuesPerWidth: 1, queueLengthLimit: 5}"),
			"spec.assuredConcurrencyShares: Required value: required when priorityLevel > 0 and no nativeLevel is named: set it (for example 10), or bind the level with nativeLevel"},

		{"two operators", fs("f1", fsSpec("{equals: {field: user, value: a}, notEquals: {field: verb, value: get}}")),
			"spec.match[0].and[0].notEquals: Forbidden: an atomic test takes exactly one operator and this one already has equals"},
		{"three operators", fs("f1b", fsSpec("{inSet: {field: user, set: [a]}, notPatternMatch: {field: verb, pattern: g}, patternMatch: {field: verb, pattern: g}}")),
			"spec.match[0].and[0].notPatternMatch: Forbidden: an atomic test takes exactly one operator and this one already has one of equals, notEquals, inSet, notInSet, superSet, notSuperSet, patternMatch"},
		{"no operator", fs("f2", fsSpec("{}")), "spec.match[0].and[0]: Required value: an atomic test takes exactly one operator: set one of"},
		{"superSet on a scalar field", fs("f3", fsSpec("{superSet: {field: user, set: [a]}}")),
			"spec.match[0].and[0].superSet.field: Invalid value: superSet applies only to field groups"},
		{"notSuperSet on a scalar field", fs("f4", fsSpec("{notSuperSet: {field: verb, set: [get]}}")),
			"spec.match[0].and[0].notSuperSet.field: Invalid value: notSuperSet applies only to field groups"},
		{"equals on groups", fs("f5", fsSpec("{equals: {field: groups, value: a}}")),
			"spec.match[0].and[0].equals.field: Invalid value: field groups is a set and equals compares one value"},
		{"patternMatch on groups", fs("f6", fsSpec("{patternMatch: {field: groups, pattern: a}}")),
			"spec.match[0].and[0].patternMatch.field: Invalid value: field groups is a set and patternMatch compares one value"},
		{"notInSet on groups, second test", fs("f6b", "{matchingPriority: 100, requestPriority: {name: x}, match: [{and: []}, {and: [{equals: {field: verb, value: get}}, {notInSet: {field: groups, set: [a]}}]}]}"),
			"spec.match[1].and[1].notInSet.field: Invalid value: field groups is a set and notInSet compares one value"},
		{"empty set", fs("f7", fsSpec("{inSet: {field: verb, set: []}}")), "should have at least 1 items"},
		{"unknown field", fs("f8", fsSpec("{equals: {field: host, value: a}}")), `Unsupported value: "host"`},
		{"pattern too long", fs("f9", fsSpec("{patternMatch: {field: user, pattern: "+long+"}}")), "Too long: may not be more than 512"},
		{"empty pattern", fs("f10", fsSpec("{patternMatch: {field: user, pattern: ''}}")), "should be at least 1 chars long"},
		{"regex too long", fs("f11", "{matchingPriority: 1, requestPriority: {name: x}, flowDistinguisher: {source: user, transformation: {regex: "+long+"}}, match: []}"),
			"Too long: may not be more than 512"},
		{"unknown source", fs("f12", "{matchingPriority: 1, requestPriority: {name: x}, flowDistinguisher: {source: host}, match: []}"),
			`Unsupported value: "host"`},
		{"negative matching priority", fs("f13", "{matchingPriority: -1, requestPriority: {name: x}, match: []}"),
			"spec.matchingPriority in body should be greater than or equal to 0"},
		{"missing reference", fs("f14", "{matchingPriority: 1, match: []}"), "spec.requestPriority: Required value"},
		{"missing match", fs("f15", "{matchingPriority: 1, requestPriority: {name: x}}"), "spec.match: Required value"},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := k8s.Create(ctx, object(t, c.manifest))
			if err == nil {
				t.Fatalf("the API server accepted an invalid object; want an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestCRDPriorityLevelIsImmutable(t *testing.T) {
	ctx := context.Background()
	obj := object(t, rp("immutable", "{priorityLevel: 4242, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1}"))
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(obj.Object, int64(4243), "spec", "priorityLevel"); err != nil {
		t.Fatal(err)
	}
	err := k8s.Update(ctx, obj)
	if err == nil || !strings.Contains(err.Error(), "priorityLevel is immutable: delete the RequestPriority and create it again") {
		t.Fatalf("update of priorityLevel: got %v, want the immutability error", err)
	}
}

// TestCRDBindingsAreImmutable: nativeLevel can be neither changed, added nor removed.
func TestCRDBindingsAreImmutable(t *testing.T) {
	ctx := context.Background()
	bound := object(t, rp("immutable-bound", "{priorityLevel: 4244, nativeLevel: workload-high}"))
	plain := object(t, rp("immutable-plain", "{priorityLevel: 4245, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1}"))
	for _, obj := range []*unstructured.Unstructured{bound, plain} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		obj   *unstructured.Unstructured
		level string
		want  string
	}{
		{bound, "workload-low", "nativeLevel is immutable: delete the RequestPriority and create it again"},
		{plain, "workload-low", "nativeLevel can be neither added nor removed"},
	} {
		obj := c.obj.DeepCopy()
		if err := unstructured.SetNestedField(obj.Object, c.level, "spec", "nativeLevel"); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Update(ctx, obj); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("update of %s: got %v, want %q", obj.GetName(), err, c.want)
		}
	}
	removed := bound.DeepCopy()
	unstructured.RemoveNestedField(removed.Object, "spec", "nativeLevel")
	if err := k8s.Update(ctx, removed); err == nil || !strings.Contains(err.Error(), "nativeLevel can be neither added nor removed") {
		t.Errorf("removing nativeLevel: got %v, want the add/remove error", err)
	}
}

func TestCRDAcceptsDefaultsAndSamples(t *testing.T) {
	ctx := context.Background()
	for _, o := range defaults.RequestPriorities() {
		o := o
		if err := k8s.Create(ctx, &o); err != nil {
			t.Errorf("default RequestPriority %s rejected: %v", o.Name, err)
		}
	}
	for _, o := range defaults.FlowSchemas() {
		o := o
		if err := k8s.Create(ctx, &o); err != nil {
			t.Errorf("default FlowSchema %s rejected: %v", o.Name, err)
		}
	}
	files, err := filepath.Glob(filepath.Join(envtestutil.RepoRoot(), "config", "samples", "flowcontrol_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := k8s.Create(ctx, object(t, string(data))); err != nil {
			t.Errorf("sample %s rejected: %v", filepath.Base(f), err)
		}
	}
	var rps flowv1.RequestPriorityList
	if err := k8s.List(ctx, &rps); err != nil {
		t.Fatal(err)
	}
	if len(rps.Items) < 6 {
		t.Errorf("found %d RequestPriority objects after creating 5 defaults and 1 sample", len(rps.Items))
	}
}
