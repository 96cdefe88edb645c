package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/manifest"
)

// Kinds of the native objects.
const (
	kindPLC = "PriorityLevelConfiguration"
	kindFS  = "FlowSchema"
)

// Input is the native configuration to import.
type Input struct {
	// PriorityLevels are the PriorityLevelConfiguration objects, names unique.
	PriorityLevels []flowcontrolv1.PriorityLevelConfiguration
	// FlowSchemas are the FlowSchema objects, names unique.
	FlowSchemas []flowcontrolv1.FlowSchema
}

// reader decodes documents into an Input, remembering where each object was defined.
type reader struct {
	in   Input
	seen map[string]string // kind/name -> FILE:DOC
	errs []error
}

// readFiles decodes the native objects of the given paths. Every error names the file and
// the document.
func readFiles(paths []string, stdin io.Reader) (*Input, error) {
	docs, err := manifest.ReadDocuments(paths, stdin)
	if err != nil {
		return nil, err
	}
	r := &reader{seen: map[string]string{}}
	for _, d := range docs {
		r.document(d)
	}
	return &r.in, errors.Join(r.errs...)
}

// fail records an error about a document.
func (r *reader) fail(d manifest.Document, format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("%s:%d: %s", d.File, d.Index, fmt.Sprintf(format, args...)))
}

// document decodes one YAML document. Only documents holding native objects are held to
// strict YAML (no duplicate keys), so that unrelated files in a searched directory cannot fail.
func (r *reader) document(d manifest.Document) {
	data, err := yaml.YAMLToJSON(d.Data)
	if err != nil {
		r.fail(d, "not valid YAML: %v", err)
		return
	}
	plcs, fss, errs := len(r.in.PriorityLevels), len(r.in.FlowSchemas), len(r.errs)
	r.value(d, data)
	touched := plcs < len(r.in.PriorityLevels) || fss < len(r.in.FlowSchemas) || errs < len(r.errs)
	if _, err := yaml.YAMLToJSONStrict(d.Data); touched && err != nil {
		for _, plc := range r.in.PriorityLevels[plcs:] {
			delete(r.seen, kindPLC+"/"+plc.Name)
		}
		for _, fs := range r.in.FlowSchemas[fss:] {
			delete(r.seen, kindFS+"/"+fs.Name)
		}
		r.in.PriorityLevels, r.in.FlowSchemas, r.errs = r.in.PriorityLevels[:plcs], r.in.FlowSchemas[:fss], r.errs[:errs]
		r.fail(d, "not valid YAML: %v", err)
	}
}

// value decodes one JSON value: a native object, a list of them, or anything else (skipped).
func (r *reader) value(d manifest.Document, data []byte) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return // not an object: nothing of the native API
	}
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil {
		return
	}
	switch {
	case strings.HasSuffix(meta.Kind, "List") && (gv.Group == "" || gv.Group == flowcontrolv1.GroupName):
		r.list(d, data)
		return
	case gv.Group != flowcontrolv1.GroupName:
		return // another API: skipped
	case versions[gv.Version].plc == nil:
		r.fail(d, "apiVersion: unsupported version %q: import reads %s of %s; export the objects at v1, e.g. "+
			"kubectl get flowschemas.v1.%s,prioritylevelconfigurations.v1.%s -o yaml", meta.APIVersion,
			supportedVersions, flowcontrolv1.GroupName, flowcontrolv1.GroupName, flowcontrolv1.GroupName)
		return
	}
	r.object(d, gv.Version, meta.Kind, data)
}

// list decodes the items of a List.
func (r *reader) list(d manifest.Document, data []byte) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		r.fail(d, "items: %v", err)
		return
	}
	for _, item := range list.Items {
		r.value(d, item)
	}
}

// object decodes a PriorityLevelConfiguration or a FlowSchema strictly at its version and
// converts it to v1 (convert.go).
func (r *reader) object(d manifest.Document, version, kind string, data []byte) {
	conv := versions[version]
	strict := func(data []byte, obj any) bool { return r.strict(d, kind, data, obj) }
	switch kind {
	case kindPLC:
		if plc, ok := conv.plc(data, strict); ok && r.unique(d, kind, plc.Name) {
			r.in.PriorityLevels = append(r.in.PriorityLevels, *plc)
		}
	case kindFS:
		if fs, ok := conv.fs(data, strict); ok && r.unique(d, kind, fs.Name) {
			r.in.FlowSchemas = append(r.in.FlowSchemas, *fs)
		}
	default:
		r.fail(d, "kind: unsupported kind %q in %s: import reads %s and %s", kind, flowcontrolv1.GroupName, kindPLC, kindFS)
	}
}

// strict decodes data into obj, rejecting unknown and duplicate fields.
func (r *reader) strict(d manifest.Document, kind string, data []byte, obj any) bool {
	strictErrs, err := sigsjson.UnmarshalStrict(data, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		r.fail(d, "cannot decode the %s: %v", kind, err)
		return false
	}
	for _, e := range strictErrs {
		r.fail(d, "%s: %v; fix its spelling (names are case-sensitive) or remove it", kind, e)
	}
	return len(strictErrs) == 0
}

// unique checks that the object has a name and is defined once.
func (r *reader) unique(d manifest.Document, kind, name string) bool {
	here := fmt.Sprintf("%s:%d", d.File, d.Index)
	switch prev, dup := r.seen[kind+"/"+name]; {
	case name == "":
		r.fail(d, "metadata.name: Required value: the %s has no name", kind)
	case dup:
		r.fail(d, "metadata.name: Duplicate value: %s %q is also defined at %s; define each object once", kind, name, prev)
	default:
		r.seen[kind+"/"+name] = here
		return true
	}
	return false
}

// ReadFiles decodes the native objects of files and directories, as `import -f` does.
func ReadFiles(paths []string) (*Input, error) { return readFiles(paths, nil) }
