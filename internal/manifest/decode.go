package manifest

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

// Object is an APF object decoded from a document, with where it came from.
type Object struct {
	// Doc is the document it was decoded from.
	Doc Document
	// RP, FS or ERL is the decoded object.
	RP *v1alpha1.RequestPriority
	FS *v1alpha1.FlowSchema
	// ERL is an EventRateLimit: checked on its own, outside the APF configuration.
	ERL *v1alpha1.EventRateLimit
	// Raw is the object as decoded JSON (numbers as int64 or float64), for the CRD schema.
	Raw map[string]any
	// DecodeErr is the first value of a type the typed object cannot hold (its field is left
	// unset; the CRD schema reports every such value, in the API server's words).
	DecodeErr error
}

// APF reports whether the object is part of the APF configuration (a RequestPriority or a
// FlowSchema).
func (o Object) APF() bool { return o.ERL == nil }

// KindName returns the object's kind and name.
func (o Object) KindName() (string, string) {
	if o.RP != nil {
		return "RequestPriority", o.RP.Name
	}
	if o.ERL != nil {
		return "EventRateLimit", o.ERL.Name
	}
	return "FlowSchema", o.FS.Name
}

// Decode returns the APF objects of a document (none for other API groups or for documents
// that are not objects; the items of a List), the findings of APF documents that cannot be
// decoded and warnings about native flow control objects. Only APF documents are held to
// strict YAML (no duplicate keys), so that unrelated files in a searched directory cannot fail
// the check.
func Decode(doc Document) ([]Object, []Finding) {
	data, err := yaml.YAMLToJSON(doc.Data)
	if err != nil {
		return nil, []Finding{syntaxFinding(doc, err)}
	}
	objs, findings := decodeJSON(doc, data)
	if len(objs) == 0 {
		return nil, findings // nothing of this operator's API, or nothing decodable
	}
	if _, err := yaml.YAMLToJSONStrict(doc.Data); err != nil {
		return nil, []Finding{syntaxFinding(doc, err)}
	}
	return objs, findings
}

// syntaxFinding is a YAML error at its line in the file.
func syntaxFinding(doc Document, err error) Finding {
	pos, msg := doc.syntaxPosition(oneLine(err.Error()))
	f := Finding{File: doc.File, Document: doc.Index, Severity: SeverityError, Message: "not valid YAML: " + msg}
	f.At(pos)
	return f
}

// decodeJSON decodes one JSON value: an APF object, a List, a native flow control object
// (a warning), or anything else (skipped).
func decodeJSON(doc Document, data []byte) ([]Object, []Finding) {
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
		return nil, []Finding{nativeObjectFinding(doc, meta, data)}
	case gv.Group != v1alpha1.GroupVersion.Group:
		return nil, nil // not an APF object of this operator: skipped
	case gv.Version != v1alpha1.GroupVersion.Version:
		return nil, []Finding{DocFinding(doc, meta.Kind, "", "apiVersion", fmt.Sprintf(
			"unsupported version %q: use %s", meta.APIVersion, v1alpha1.GroupVersion))}
	}
	switch meta.Kind {
	case "RequestPriority":
		rp := &v1alpha1.RequestPriority{}
		return decodeObject(doc, data, rp, Object{Doc: doc, RP: rp})
	case "FlowSchema":
		fs := &v1alpha1.FlowSchema{}
		return decodeObject(doc, data, fs, Object{Doc: doc, FS: fs})
	case "EventRateLimit":
		erl := &v1alpha1.EventRateLimit{}
		return decodeObject(doc, data, erl, Object{Doc: doc, ERL: erl})
	}
	return nil, []Finding{DocFinding(doc, meta.Kind, "", "kind", fmt.Sprintf(
		"unsupported kind %q in %s: use RequestPriority, FlowSchema or EventRateLimit", meta.Kind, v1alpha1.GroupVersion))}
}

// nativeObjectFinding warns that a native flow control object is not checked, and how to
// convert it into this operator's objects.
func nativeObjectFinding(doc Document, meta metav1.TypeMeta, data []byte) Finding {
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &obj) // a missing name only shortens the message
	file := doc.File
	if file == StdinName {
		file = "-"
	}
	f := DocFinding(doc, meta.Kind, obj.Metadata.Name, "", fmt.Sprintf("%s %s %q is kube-apiserver's own flow control "+
		"object, not checked: apf-operator manages RequestPriority and FlowSchema objects; convert it with "+
		"`apf-operator import -f %s`", meta.APIVersion, meta.Kind, obj.Metadata.Name, file))
	f.Severity = SeverityWarning
	return f
}

// decodeList decodes the items of a v1 List.
func decodeList(doc Document, data []byte) ([]Object, []Finding) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, []Finding{DocFinding(doc, "List", "", "items", err.Error())}
	}
	var objs []Object
	var findings []Finding
	for i, item := range list.Items {
		itemDoc := doc
		itemDoc.Root = fmt.Sprintf("%sitems[%d].", doc.Root, i)
		o, f := decodeJSON(itemDoc, item)
		objs, findings = append(objs, o...), append(findings, f...)
	}
	return objs, findings
}

// decodeObject decodes data leniently: into the raw JSON form for the CRD schema, and into
// into, reporting unknown and duplicate fields the way `kubectl apply --validate=strict` does.
// A value of the wrong type leaves its field unset in into (the CRD schema reports it, in the
// API server's words) and the rest of the object is decoded and checked.
func decodeObject(doc Document, data []byte, into any, obj Object) ([]Object, []Finding) {
	if err := utiljson.Unmarshal(data, &obj.Raw); err != nil {
		kind, _ := obj.KindName()
		return nil, []Finding{DocFinding(doc, kind, "", "", "cannot decode: "+err.Error())}
	}
	// A type error does not stop the decoding: the other fields are set.
	strictErrs, err := sigsjson.UnmarshalStrict(data, into, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	obj.DecodeErr = err
	kind, name := obj.KindName()
	var findings []Finding
	for _, e := range strictErrs {
		findings = append(findings, strictFinding(doc, kind, name, e))
	}
	return []Object{obj}, findings
}

// strictFinding turns an unknown or duplicate field into a finding on that field's path.
func strictFinding(doc Document, kind, name string, err error) Finding {
	var withPath interface{ FieldPath() string }
	if errors.As(err, &withPath) {
		msg := "unknown field: " + kind + " has no such field; fix its spelling (names are case-sensitive) or remove it"
		if strings.HasPrefix(err.Error(), "duplicate") {
			msg = "duplicate field: set it once"
		}
		return DocFinding(doc, kind, name, withPath.FieldPath(), msg)
	}
	return DocFinding(doc, kind, name, "", err.Error())
}
