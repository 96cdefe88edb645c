package importer

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
)

// nativeMatches is rule.go's matchesFlowSchema (internal/native's matcher, which the importer
// itself does not use). Which FlowSchema kube-apiserver picks among several is asked of
// kube-apiserver's own controller (nativetest), not of a second classifier.
func nativeMatches(fs *flowcontrolv1.FlowSchema, a *request.Attributes) bool {
	return native.Matches(fs, a)
}
