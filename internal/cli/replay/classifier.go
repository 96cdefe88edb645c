package replay

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/nativeview"
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

// viewClassifier classifies as kube-apiserver's APF controller does with a given set of native
// objects, through the same nativeview.View that explain uses: schemas ordered once by
// matchingPrecedence then name, schemas whose priority level does not exist skipped, the
// mandatory exempt and catch-all objects added when missing, the first match wins.
type viewClassifier struct {
	view *nativeview.View
}

// NewNativeClassifier returns the Classifier of kube-apiserver holding these native objects.
func NewNativeClassifier(schemas []flowcontrolv1.FlowSchema, levels []flowcontrolv1.PriorityLevelConfiguration) Classifier {
	return viewClassifier{view: nativeview.New("replay", schemas, levels, 0)}
}

// Classify implements Classifier.
func (c viewClassifier) Classify(a *request.Attributes) Class {
	ans := c.view.Classify(a)
	if !ans.Classified {
		return Class{}
	}
	return Class{FlowSchema: ans.FlowSchema.Name, PriorityLevel: ans.PriorityLevel.Name}
}
