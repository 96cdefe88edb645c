package importer

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// printed is what is printed of an object: no status, no empty metadata fields.
type printed struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   printedMeta `json:"metadata"`
	Spec       any         `json:"spec"`
}

// printedMeta is the metadata printed: the name, and the labels and annotations carried over.
type printedMeta struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func metaOf(m *metav1.ObjectMeta) printedMeta {
	return printedMeta{Name: m.Name, Labels: m.Labels, Annotations: m.Annotations}
}

// Write prints the imported objects as YAML documents, each preceded by a comment naming
// the native object it came from: RequestPriority objects by level, then FlowSchema objects
// by matchingPriority and name.
func Write(w io.Writer, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Imported by apf-operator import: %d RequestPriority and %d FlowSchema objects.\n",
		len(res.RequestPriorities), len(res.FlowSchemas))
	for i := range res.RequestPriorities {
		rp := &res.RequestPriorities[i]
		if err := writeDoc(&b, native.KindRequestPriority, metaOf(&rp.ObjectMeta), &rp.Spec, res.Sources); err != nil {
			return err
		}
	}
	for i := range res.FlowSchemas {
		fs := &res.FlowSchemas[i]
		if err := writeDoc(&b, native.KindFlowSchema, metaOf(&fs.ObjectMeta), &fs.Spec, res.Sources); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeDoc(b *strings.Builder, kind string, meta printedMeta, spec any, sources map[string]string) error {
	m := printed{APIVersion: flowv1.GroupVersion.String(), Kind: kind, Metadata: meta, Spec: spec}
	name := meta.Name
	data, err := yaml.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s %q: %w", kind, name, err)
	}
	b.WriteString("---\n")
	if src := sources[kind+"/"+name]; src != "" {
		b.WriteString("# from " + src + "\n")
	}
	b.Write(data)
	return nil
}

// Report prints the notes, the problems (as warnings: each object named was left out), the
// skipped objects and a summary line.
func (res *Result) Report(w io.Writer) {
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	for _, p := range res.Problems {
		fmt.Fprintln(w, "warning: "+p)
	}
	for _, u := range res.Unenforced {
		fmt.Fprintln(w, "warning: "+u)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "skipped %s %q: %s\n", s.Kind, s.Name, s.Why)
	}
	fmt.Fprintf(w, "imported %d RequestPriority (%d bound to existing levels) and %d FlowSchema objects; "+
		"not enforced: %d native object(s) could not be imported exactly and are left out, %d imported FlowSchema(s) "+
		"refer to a level that exists nowhere known\n", len(res.RequestPriorities), res.BoundCount(), len(res.FlowSchemas),
		len(res.Problems), len(res.Unenforced))
}

// BoundCount is the number of imported RequestPriority objects bound to an existing level.
func (res *Result) BoundCount() int {
	n := 0
	for i := range res.RequestPriorities {
		if res.RequestPriorities[i].Spec.NativeLevel != "" {
			n++
		}
	}
	return n
}

// List is the imported objects as one v1 List of RequestPriority then FlowSchema objects, in
// Write's order, for cli-runtime's printers (-o json, yaml, name, jsonpath).
func (res *Result) List() (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	add := func(kind string, meta *metav1.ObjectMeta, spec any) error {
		m := printed{APIVersion: flowv1.GroupVersion.String(), Kind: kind, Metadata: metaOf(meta), Spec: spec}
		name := meta.Name
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
		if err != nil {
			return fmt.Errorf("%s %q: %w", kind, name, err)
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: obj})
		return nil
	}
	for i := range res.RequestPriorities {
		if err := add(native.KindRequestPriority, &res.RequestPriorities[i].ObjectMeta, &res.RequestPriorities[i].Spec); err != nil {
			return nil, err
		}
	}
	for i := range res.FlowSchemas {
		if err := add(native.KindFlowSchema, &res.FlowSchemas[i].ObjectMeta, &res.FlowSchemas[i].Spec); err != nil {
			return nil, err
		}
	}
	return list, nil
}
