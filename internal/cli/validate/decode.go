package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// object is an APF object decoded from a document, with where it came from.
type object struct {
	doc document
	rp  *v1alpha1.RequestPriority
	fs  *v1alpha1.FlowSchema
	// erl is an EventRateLimit: checked on its own, outside the APF configuration.
	erl *v1alpha1.EventRateLimit
}

// apf reports whether the object is part of the APF configuration (a RequestPriority or a
// FlowSchema).
func (o object) apf() bool { return o.erl == nil }

// kindName returns the object's kind and name.
func (o object) kindName() (string, string) {
	if o.rp != nil {
		return "RequestPriority", o.rp.Name
	}
	if o.erl != nil {
		return "EventRateLimit", o.erl.Name
	}
	return "FlowSchema", o.fs.Name
}

// decode returns the APF objects of a document (none for other API groups or for documents
// that are not objects; the items of a List) and the findings of APF documents that cannot be
// decoded. Only APF documents are held to strict YAML (no duplicate keys), so that unrelated
// files in a searched directory cannot fail the check.
func decode(doc document) ([]object, []finding) {
	data, err := yaml.YAMLToJSON(doc.data)
	if err != nil {
		return nil, []finding{docFinding(doc, "", "", "", "not valid YAML: "+err.Error())}
	}
	objs, findings := decodeJSON(doc, data)
	if len(objs)+len(findings) == 0 {
		return nil, nil // nothing of this operator's API
	}
	if _, err := yaml.YAMLToJSONStrict(doc.data); err != nil {
		return nil, []finding{docFinding(doc, "", "", "", "not valid YAML: "+err.Error())}
	}
	return objs, findings
}

// decodeJSON decodes one JSON value: an APF object, a List, or anything else (skipped).
func decodeJSON(doc document, data []byte) ([]object, []finding) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, nil // not an object (null, a scalar, a list) or not a Kubernetes one
	}
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil {
		return nil, nil // not a Kubernetes apiVersion, so not one of ours
	}
	switch {
	case gv.Group == "" && meta.Kind == "List":
		return decodeList(doc, data)
	case gv.Group != v1alpha1.GroupVersion.Group:
		return nil, nil // not an APF object of this operator: skipped
	case gv.Version != v1alpha1.GroupVersion.Version:
		return nil, []finding{docFinding(doc, meta.Kind, "", "apiVersion", fmt.Sprintf(
			"unsupported version %q: use %s", meta.APIVersion, v1alpha1.GroupVersion))}
	}
	switch meta.Kind {
	case "RequestPriority":
		rp := &v1alpha1.RequestPriority{}
		return decodeStrict(doc, data, rp, object{doc: doc, rp: rp})
	case "FlowSchema":
		fs := &v1alpha1.FlowSchema{}
		return decodeStrict(doc, data, fs, object{doc: doc, fs: fs})
	case "EventRateLimit":
		erl := &v1alpha1.EventRateLimit{}
		return decodeStrict(doc, data, erl, object{doc: doc, erl: erl})
	}
	return nil, []finding{docFinding(doc, meta.Kind, "", "kind", fmt.Sprintf(
		"unsupported kind %q in %s: use RequestPriority, FlowSchema or EventRateLimit", meta.Kind, v1alpha1.GroupVersion))}
}

// decodeList decodes the items of a v1 List.
func decodeList(doc document, data []byte) ([]object, []finding) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, []finding{docFinding(doc, "List", "", "items", err.Error())}
	}
	var objs []object
	var findings []finding
	for i, item := range list.Items {
		itemDoc := doc
		itemDoc.root = fmt.Sprintf("%sitems[%d].", doc.root, i)
		o, f := decodeJSON(itemDoc, item)
		objs, findings = append(objs, o...), append(findings, f...)
	}
	return objs, findings
}

// decodeStrict decodes data into into, rejecting unknown and duplicate fields the way
// `kubectl apply --validate=strict` does.
func decodeStrict(doc document, data []byte, into any, obj object) ([]object, []finding) {
	strictErrs, err := sigsjson.UnmarshalStrict(data, into, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	kind, _ := obj.kindName()
	if err != nil {
		return nil, []finding{docFinding(doc, kind, "", "", "cannot decode: "+err.Error())}
	}
	_, name := obj.kindName()
	var findings []finding
	for _, e := range strictErrs {
		findings = append(findings, strictFinding(doc, kind, name, e))
	}
	if len(findings) > 0 {
		return nil, findings
	}
	return []object{obj}, nil
}

// strictFinding turns an unknown or duplicate field into a finding on that field's path.
func strictFinding(doc document, kind, name string, err error) finding {
	var withPath interface{ FieldPath() string }
	if errors.As(err, &withPath) {
		msg := "unknown field: " + kind + " has no such field; fix its spelling (names are case-sensitive) or remove it"
		if strings.HasPrefix(err.Error(), "duplicate") {
			msg = "duplicate field: set it once"
		}
		return docFinding(doc, kind, name, withPath.FieldPath(), msg)
	}
	return docFinding(doc, kind, name, "", err.Error())
}
