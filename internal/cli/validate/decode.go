package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// nativeGroup is kube-apiserver's own flow control API group.
const nativeGroup = "flowcontrol.apiserver.k8s.io"

// object is an APF object decoded from a document, with where it came from.
type object struct {
	doc document
	rp  *v1alpha1.RequestPriority
	fs  *v1alpha1.FlowSchema
	// erl is an EventRateLimit: checked on its own, outside the APF configuration.
	erl *v1alpha1.EventRateLimit
	// raw is the object as decoded JSON (numbers as int64 or float64), for the CRD schema.
	raw map[string]any
	// decodeErr is the first value of a type the typed object cannot hold (its field is left
	// unset; the CRD schema reports every such value, in the API server's words).
	decodeErr error
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
// that are not objects; the items of a List), the findings of APF documents that cannot be
// decoded and warnings about native flow control objects. Only APF documents are held to
// strict YAML (no duplicate keys), so that unrelated files in a searched directory cannot fail
// the check.
func decode(doc document) ([]object, []finding) {
	data, err := yaml.YAMLToJSON(doc.data)
	if err != nil {
		return nil, []finding{syntaxFinding(doc, err)}
	}
	objs, findings := decodeJSON(doc, data)
	if len(objs) == 0 {
		return nil, findings // nothing of this operator's API, or nothing decodable
	}
	if _, err := yaml.YAMLToJSONStrict(doc.data); err != nil {
		return nil, []finding{syntaxFinding(doc, err)}
	}
	return objs, findings
}

// syntaxFinding is a YAML error at its line in the file.
func syntaxFinding(doc document, err error) finding {
	pos, msg := doc.syntaxPosition(oneLine(err.Error()))
	f := finding{File: doc.file, Document: doc.index, Severity: severityError, Message: "not valid YAML: " + msg}
	f.at(pos)
	return f
}

// decodeJSON decodes one JSON value: an APF object, a List, a native flow control object
// (a warning), or anything else (skipped).
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
	case gv.Group == nativeGroup:
		return nil, []finding{nativeObjectFinding(doc, meta, data)}
	case gv.Group != v1alpha1.GroupVersion.Group:
		return nil, nil // not an APF object of this operator: skipped
	case gv.Version != v1alpha1.GroupVersion.Version:
		return nil, []finding{docFinding(doc, meta.Kind, "", "apiVersion", fmt.Sprintf(
			"unsupported version %q: use %s", meta.APIVersion, v1alpha1.GroupVersion))}
	}
	switch meta.Kind {
	case "RequestPriority":
		rp := &v1alpha1.RequestPriority{}
		return decodeObject(doc, data, rp, object{doc: doc, rp: rp})
	case "FlowSchema":
		fs := &v1alpha1.FlowSchema{}
		return decodeObject(doc, data, fs, object{doc: doc, fs: fs})
	case "EventRateLimit":
		erl := &v1alpha1.EventRateLimit{}
		return decodeObject(doc, data, erl, object{doc: doc, erl: erl})
	}
	return nil, []finding{docFinding(doc, meta.Kind, "", "kind", fmt.Sprintf(
		"unsupported kind %q in %s: use RequestPriority, FlowSchema or EventRateLimit", meta.Kind, v1alpha1.GroupVersion))}
}

// nativeObjectFinding warns that a native flow control object is not checked, and how to
// convert it into this operator's objects.
func nativeObjectFinding(doc document, meta metav1.TypeMeta, data []byte) finding {
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &obj) // a missing name only shortens the message
	file := doc.file
	if file == stdinName {
		file = "-"
	}
	f := docFinding(doc, meta.Kind, obj.Metadata.Name, "", fmt.Sprintf("%s %s %q is kube-apiserver's own flow control "+
		"object, not checked: apf-operator manages RequestPriority and FlowSchema objects; convert it with "+
		"`apf-operator import -f %s`", meta.APIVersion, meta.Kind, obj.Metadata.Name, file))
	f.Severity = severityWarning
	return f
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

// decodeObject decodes data leniently: into the raw JSON form for the CRD schema, and into
// into, reporting unknown and duplicate fields the way `kubectl apply --validate=strict` does.
// A value of the wrong type leaves its field unset in into (the CRD schema reports it, in the
// API server's words) and the rest of the object is decoded and checked.
func decodeObject(doc document, data []byte, into any, obj object) ([]object, []finding) {
	if err := utiljson.Unmarshal(data, &obj.raw); err != nil {
		kind, _ := obj.kindName()
		return nil, []finding{docFinding(doc, kind, "", "", "cannot decode: "+err.Error())}
	}
	// A type error does not stop the decoding: the other fields are set.
	strictErrs, err := sigsjson.UnmarshalStrict(data, into, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	obj.decodeErr = err
	kind, name := obj.kindName()
	var findings []finding
	for _, e := range strictErrs {
		findings = append(findings, strictFinding(doc, kind, name, e))
	}
	return []object{obj}, findings
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
