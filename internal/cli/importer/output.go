package importer

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// printed is what is printed of an object: no status, no empty metadata fields.
type printed struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec any `json:"spec"`
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
		if err := writeDoc(&b, native.KindRequestPriority, rp.Name, &rp.Spec, res.Sources); err != nil {
			return err
		}
	}
	for i := range res.FlowSchemas {
		fs := &res.FlowSchemas[i]
		if err := writeDoc(&b, native.KindFlowSchema, fs.Name, &fs.Spec, res.Sources); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeDoc(b *strings.Builder, kind, name string, spec any, sources map[string]string) error {
	m := printed{APIVersion: flowv1.GroupVersion.String(), Kind: kind, Spec: spec}
	m.Metadata.Name = name
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
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "skipped %s %q: %s\n", s.Kind, s.Name, s.Why)
	}
	fmt.Fprintf(w, "imported %d RequestPriority and %d FlowSchema objects; %d native object(s) could not be imported exactly\n",
		len(res.RequestPriorities), len(res.FlowSchemas), len(res.Problems))
}

// List is the imported objects as one v1 List of RequestPriority then FlowSchema objects, in
// Write's order, for cli-runtime's printers (-o json, yaml, name, jsonpath).
func (res *Result) List() (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	add := func(kind, name string, spec any) error {
		m := printed{APIVersion: flowv1.GroupVersion.String(), Kind: kind, Spec: spec}
		m.Metadata.Name = name
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
		if err != nil {
			return fmt.Errorf("%s %q: %w", kind, name, err)
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: obj})
		return nil
	}
	for i := range res.RequestPriorities {
		if err := add(native.KindRequestPriority, res.RequestPriorities[i].Name, &res.RequestPriorities[i].Spec); err != nil {
			return nil, err
		}
	}
	for i := range res.FlowSchemas {
		if err := add(native.KindFlowSchema, res.FlowSchemas[i].Name, &res.FlowSchemas[i].Spec); err != nil {
			return nil, err
		}
	}
	return list, nil
}
