package replay

import (
	"cmp"
	"slices"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
)

// Class is where kube-apiserver puts a request: the FlowSchema that matches it first and that
// schema's priority level. The zero Class is a request kube-apiserver serves unclassified
// (long-running: exec, attach, logs, port-forward, proxy).
type Class struct {
	FlowSchema    string `json:"flowSchema"`
	PriorityLevel string `json:"priorityLevel"`
}

// unclassified names the zero Class in reports.
const unclassified = "(unclassified)"

// LevelName is the level's name, or "(unclassified)".
func (c Class) LevelName() string {
	if c.PriorityLevel == "" {
		return unclassified
	}
	return c.PriorityLevel
}

// SchemaName is the FlowSchema's name, or "(unclassified)".
func (c Class) SchemaName() string {
	if c.FlowSchema == "" {
		return unclassified
	}
	return c.FlowSchema
}

// Classifier classifies requests under one configuration. Classify is a pure function of the
// attributes (the replay caches its answers by them), safe for one goroutine at a time.
type Classifier interface {
	Classify(a *request.Attributes) Class
}

// nativeClassifier classifies as kube-apiserver's APF controller does with a given set of
// native objects: schemas ordered once by matchingPrecedence then name, schemas whose priority
// level does not exist skipped (dangling), the mandatory exempt and catch-all schemas added
// when missing, and the first schema that matches wins (native.Matches, kube-apiserver's rule).
type nativeClassifier struct {
	ordered []*flowcontrolv1.FlowSchema
}

// NewNativeClassifier returns the Classifier of kube-apiserver holding these native objects.
func NewNativeClassifier(schemas []flowcontrolv1.FlowSchema, levels []flowcontrolv1.PriorityLevelConfiguration) Classifier {
	exists := make(map[string]bool, len(levels))
	for i := range levels {
		exists[levels[i].Name] = true
	}
	c := &nativeClassifier{}
	names := map[string]bool{}
	for i := range schemas {
		if exists[schemas[i].Spec.PriorityLevelConfiguration.Name] {
			c.ordered = append(c.ordered, &schemas[i])
			names[schemas[i].Name] = true
		}
	}
	for _, fs := range bootstrap.MandatoryFlowSchemas {
		if !names[fs.Name] {
			c.ordered = append(c.ordered, fs.DeepCopy())
		}
	}
	slices.SortStableFunc(c.ordered, func(x, y *flowcontrolv1.FlowSchema) int {
		if p, q := x.Spec.MatchingPrecedence, y.Spec.MatchingPrecedence; p != q {
			return int(p - q)
		}
		return cmp.Compare(x.Name, y.Name)
	})
	return c
}

// Classify implements Classifier.
func (c *nativeClassifier) Classify(a *request.Attributes) Class {
	if !native.Classified(a) {
		return Class{}
	}
	for _, fs := range c.ordered {
		if native.Matches(fs, a) {
			return Class{FlowSchema: fs.Name, PriorityLevel: fs.Spec.PriorityLevelConfiguration.Name}
		}
	}
	// Unreachable: the mandatory catch-all matches every request.
	return Class{FlowSchema: "(none)", PriorityLevel: "(none)"}
}
