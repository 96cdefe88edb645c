package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
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

// Decode returns the APF objects of a document (none for other API groups or for a document
// of comments only; the items of a List), the findings of APF documents that cannot be
// decoded, of documents that are not Kubernetes objects (no apiVersion or kind, not a
// mapping) or whose group looks like a misspelling of this operator's, and warnings about
// native flow control objects. Only APF documents are held to strict YAML (no duplicate
// keys), so that other projects' files in a searched directory cannot fail the check.
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
	if string(data) == "null" {
		return nil, nil // comments only: nothing to check
	}
	var meta metav1.TypeMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, []Finding{DocFinding(doc, "", "", "", "not a Kubernetes object: a manifest document is a "+
			"mapping with apiVersion and kind")}
	}
	if meta.APIVersion == "" && meta.Kind == "" && isKustomization(doc.File) {
		return nil, nil // kustomize's own file, which may omit both: another tool's document
	}
	if f := typeMetaFinding(doc, meta); f != nil {
		return nil, []Finding{*f}
	}
	gv, _ := schema.ParseGroupVersion(meta.APIVersion) // checked by typeMetaFinding
	switch {
	case gv.Group == "" && meta.Kind == "List":
		return decodeList(doc, data)
	case gv.Group == nativeGroup:
		return nil, []Finding{nativeObjectFinding(doc, meta, data)}
	case gv.Group != v1alpha1.GroupVersion.Group && LooksLikeOurGroup(gv.Group):
		return nil, []Finding{DocFinding(doc, meta.Kind, "", "apiVersion", fmt.Sprintf(
			"unknown API group %q: did you mean %s?", gv.Group, v1alpha1.GroupVersion))}
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

// typeMetaFinding is an error when the document lacks apiVersion or kind, or its apiVersion
// is malformed, as `kubectl apply` refuses it; nil when both are there.
func typeMetaFinding(doc Document, meta metav1.TypeMeta) *Finding {
	var f Finding
	switch _, err := schema.ParseGroupVersion(meta.APIVersion); {
	case meta.APIVersion == "":
		f = DocFinding(doc, meta.Kind, "", "apiVersion", "Required value: every object names its apiVersion, "+
			"for this operator's objects "+v1alpha1.GroupVersion.String())
	case err != nil:
		f = DocFinding(doc, meta.Kind, "", "apiVersion", "Invalid value: "+err.Error())
	case meta.Kind == "":
		f = DocFinding(doc, "", "", "kind", "Required value: every object names its kind")
	default:
		return nil
	}
	return &f
}

// isKustomization reports whether file is one of the names kustomize reads its
// configuration from.
func isKustomization(file string) bool {
	switch filepath.Base(file) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

// ourGroupSuffix is the end of the API groups of this operator's family.
const ourGroupSuffix = "apf-operator.io"

// LooksLikeOurGroup reports whether group is meant to be this operator's: another group of the
// apf-operator.io family, or one within three edits of flowcontrol.apf-operator.io (a typo
// such as flowcontrol.apf-operater.io). Such documents are findings, not skipped as another
// project's objects, so that a typo cannot pass unchecked.
func LooksLikeOurGroup(group string) bool {
	return strings.HasSuffix(group, "."+ourGroupSuffix) || group == ourGroupSuffix ||
		editDistance(group, v1alpha1.GroupVersion.Group) <= 3
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
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

// CommentsOnly reports whether the document holds nothing but comments (and blank lines).
func (d Document) CommentsOnly() bool {
	data, err := yaml.YAMLToJSON(d.Data)
	return err == nil && string(data) == "null"
}
