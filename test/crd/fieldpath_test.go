package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// objectKey names one object of a corpus file as findings do: document index, kind, name.
type objectKey struct {
	doc        int
	kind, name string
}

func (k objectKey) String() string { return fmt.Sprintf("%d %s %q", k.doc, k.kind, k.name) }

// The differences between the API server without the webhook and the offline validator, per
// corpus file, as "DOC KIND \"NAME\": FIELD". Everything else both name alike.
var (
	// webhookOnly: offline errors the API server does not report without the webhook: rules
	// across objects (unique levels and names, references) and what CEL cannot express (RE2
	// syntax, capturing groups, the hand-size limit, conjunctions that may match non-resource
	// requests).
	webhookOnly = map[string][]string{
		"fs-distinguisher-after-rp.yaml":        {`0 FlowSchema "admins": spec.flowDistinguisher`, `0 RequestPriority "exempt": spec.priorityLevel`},
		"fs-distinguisher-exempt.yaml":          {`0 FlowSchema "system-top": spec.flowDistinguisher`},
		"fs-distinguisher-single-queue.yaml":    {`0 FlowSchema "system-low": spec.flowDistinguisher`, `1 RequestPriority "system-low": spec.queuesPerWidth`},
		"fs-duplicate-name.yaml":                {`1 FlowSchema "catch-all": metadata.name`},
		"fs-namespace-source-non-resource.yaml": {`0 FlowSchema "workload-high": spec.flowDistinguisher.source`},
		"fs-reference-and-priority.yaml":        {`0 FlowSchema "bad-reference": spec.requestPriority.name`},
		"fs-regex-no-capturing-group.yaml":      {`0 FlowSchema "tenants": spec.flowDistinguisher.transformation.regex`},
		"fs-regex-not-re2.yaml":                 {`0 FlowSchema "tenants": spec.flowDistinguisher.transformation.regex`, `0 FlowSchema "tenants": spec.match[0].and[0].patternMatch.pattern`},
		"rp-duplicate-level.yaml":               {`0 RequestPriority "batch-a": spec.priorityLevel`, `1 RequestPriority "batch-b": spec.priorityLevel`},
		"rp-hand-size-limit.yaml":               {`0 RequestPriority "too-large-hand": spec.handSize`},
	}
	// afterSchemaErrors: offline errors that CEL reports only once the object passes its
	// OpenAPI schema: the API server skips CEL rules while a required field is missing or a
	// value has the wrong type or enum ("some validation rules were not checked"). Their paths
	// are checked one rule at a time in TestCRDRejectsInvalidObjects.
	afterSchemaErrors = map[string][]string{
		"fs-atomic-tests.yaml": {`0 FlowSchema "broken-tests": spec.match[0].and[0].inSet`, `0 FlowSchema "broken-tests": spec.match[0].and[1]`,
			`0 FlowSchema "broken-tests": spec.match[0].and[3].equals.field`},
	}
	// liveOnly: fields the API server names and the offline validator does not. None since the
	// offline validator runs the CRDs' own schema and CEL rules too (package
	// internal/validation/crdschema): it reports the fields a non-zero level needs on an
	// out-of-range priorityLevel, and a value of the wrong type on its field.
	liveOnly = map[string][]string{}
)

// liveResult is what the API server says about one object: the fields its errors name, and
// whether it skipped CEL rules because of schema errors.
type liveResult struct {
	fields    sets.Set[string]
	unchecked bool
}

// TestLiveErrorsNameTheOfflineFieldPaths sends every object of the invalid corpus to the API
// server (no webhook here, so the CRD's schema and CEL rules answer) and compares the fields
// its errors name with the fields of the offline validator's (apf-operator validate) errors
// for the same object: they must be the same, except the differences listed above.
func TestLiveErrorsNameTheOfflineFieldPaths(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(envtestutil.RepoRoot(), "internal", "validation", "testdata", "invalid", "*.yaml"))
	if err != nil || len(files) < 15 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	same := 0
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			offline := offlineErrors(t, file)
			live, ok := liveErrors(t, file)
			if !ok {
				t.Skipf("not sent: the file is not YAML (%d objects with offline errors)", len(offline))
			}
			var missed, later, extra []string
			for key, got := range live {
				paths := offline[key]
				for _, p := range sets.List(got.fields.Difference(paths)) {
					extra = append(extra, key.String()+": "+p)
				}
				for _, p := range sets.List(paths.Difference(got.fields)) {
					if got.unchecked {
						later = append(later, key.String()+": "+p)
					} else {
						missed = append(missed, key.String()+": "+p)
					}
				}
				same += got.fields.Intersection(paths).Len()
			}
			name := filepath.Base(file)
			sameList(t, "offline errors only the webhook reports", missed, webhookOnly[name])
			sameList(t, "offline errors CEL reports once the schema errors are fixed", later, afterSchemaErrors[name])
			sameList(t, "fields only the API server names", extra, liveOnly[name])
		})
	}
	if same < 20 {
		t.Errorf("only %d field paths named by both; the corpus should exercise the CRD's rules", same)
	}
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	sort.Strings(got)
	want = slices.Clone(want)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// offlineErrors runs apf-operator validate on the file and returns the field paths of its
// errors by object.
func offlineErrors(t *testing.T, file string) map[objectKey]sets.Set[string] {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := validate.Run([]string{"--target", "filter", "-o", "json", "-f", file}, nil, &out, &errOut); code != validate.ExitError {
		t.Fatalf("validate exit %d, want %d: %s", code, validate.ExitError, errOut.String())
	}
	var report struct {
		Findings []struct {
			Document             int
			Kind, Name, Severity string
			Field                string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatal(err)
	}
	byObject := map[objectKey]sets.Set[string]{}
	for _, f := range report.Findings {
		if f.Severity != "error" || f.Kind == "" {
			continue
		}
		key := objectKey{f.Document, f.Kind, f.Name}
		if byObject[key] == nil {
			byObject[key] = sets.New[string]()
		}
		if f.Field != "" { // a decoding error names its field in the message only
			byObject[key].Insert(f.Field)
		}
	}
	return byObject
}

// liveErrors creates every RequestPriority and FlowSchema of the file with a server-side dry
// run and strict field validation, and returns the fields the API server's errors name, by
// object (none when it accepts the object). ok is false when the file is not YAML.
func liveErrors(t *testing.T, file string) (map[objectKey]liveResult, bool) {
	t.Helper()
	docs, err := manifest.ReadDocuments([]string{file}, nil)
	if err != nil {
		return nil, false
	}
	byObject := map[objectKey]liveResult{}
	for _, d := range docs {
		for _, obj := range flowcontrolObjects(t, d.Data) {
			key := objectKey{d.Index, obj.GetKind(), obj.GetName()}
			byObject[key] = causeFields(t, key, k8s.Create(context.Background(), obj, client.DryRunAll, client.FieldValidation("Strict")))
		}
	}
	return byObject, true
}

// flowcontrolObjects returns the RequestPriority and FlowSchema objects of one YAML document
// (the items of a List included) in the version the CRDs serve.
func flowcontrolObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	doc := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &doc.Object); err != nil || doc.Object == nil {
		return nil // the offline validator reports it without a field
	}
	candidates := []*unstructured.Unstructured{doc}
	if doc.IsList() {
		list, err := doc.ToList()
		if err != nil {
			t.Fatal(err)
		}
		candidates = nil
		for i := range list.Items {
			candidates = append(candidates, &list.Items[i])
		}
	}
	var out []*unstructured.Unstructured
	for _, c := range candidates {
		gvk := c.GroupVersionKind()
		if gvk.GroupVersion() == flowv1.GroupVersion && (gvk.Kind == "RequestPriority" || gvk.Kind == "FlowSchema") {
			out = append(out, c)
		}
	}
	return out
}

// unknownField finds the fields of a strict decoding error, which names them in its message.
var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// causeFields returns the fields an API error names; it fails the test on other errors.
func causeFields(t *testing.T, key objectKey, err error) liveResult {
	t.Helper()
	res := liveResult{fields: sets.New[string]()}
	if err == nil || apierrors.IsAlreadyExists(err) {
		return res // valid: a dry-run creation checks existence after validation
	}
	var status apierrors.APIStatus
	switch {
	case apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "strict decoding error"):
		for _, m := range unknownField.FindAllStringSubmatch(err.Error(), -1) {
			res.fields.Insert(m[1])
		}
		return res
	case !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil:
		t.Fatalf("%s: %v", key, err)
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "" || c.Field == "<nil>" {
			res.unchecked = res.unchecked || strings.Contains(c.Message, "validation rules were not checked")
			continue
		}
		res.fields.Insert(c.Field)
	}
	if res.fields.Len() == 0 {
		t.Fatalf("%s: the API server's error names no field: %v", key, err)
	}
	return res
}
