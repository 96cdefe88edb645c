package webhooks

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// requestLogger is controller-runtime's admission.DefaultLogConstructor with the request's
// values added only when a line is logged. A zap logger encodes the values of WithValues at
// once, which cost 15% of an admission's CPU in the scale test (docs/scale.md), while the
// webhooks log only failures.
func requestLogger(base logr.Logger, req *admission.Request) logr.Logger {
	if req == nil || base.GetSink() == nil {
		return base
	}
	return logr.New(&deferredValues{sink: base.GetSink(), values: []any{
		"webhookGroup", req.Kind.Group, "webhookKind", req.Kind.Kind,
		"object", klog.KRef(req.Namespace, req.Name), "namespace", req.Namespace, "name", req.Name,
		"resource", req.Resource, "user", req.UserInfo.Username, "requestID", req.UID,
	}})
}

// deferredValues is a logr.LogSink that keeps the values of WithValues and hands them to its
// sink only for a line actually logged.
type deferredValues struct {
	sink   logr.LogSink
	values []any
}

// Init implements logr.LogSink; the wrapper adds one frame between the caller and the sink.
func (d *deferredValues) Init(info logr.RuntimeInfo) {
	info.CallDepth++
	d.sink.Init(info)
}

// Enabled implements logr.LogSink.
func (d *deferredValues) Enabled(level int) bool { return d.sink.Enabled(level) }

// Info implements logr.LogSink.
func (d *deferredValues) Info(level int, msg string, keysAndValues ...any) {
	d.sink.WithValues(d.values...).Info(level, msg, keysAndValues...)
}

// Error implements logr.LogSink.
func (d *deferredValues) Error(err error, msg string, keysAndValues ...any) {
	d.sink.WithValues(d.values...).Error(err, msg, keysAndValues...)
}

// WithValues implements logr.LogSink.
func (d *deferredValues) WithValues(keysAndValues ...any) logr.LogSink {
	values := make([]any, 0, len(d.values)+len(keysAndValues))
	return &deferredValues{sink: d.sink, values: append(append(values, d.values...), keysAndValues...)}
}

// WithName implements logr.LogSink.
func (d *deferredValues) WithName(name string) logr.LogSink {
	return &deferredValues{sink: d.sink.WithName(name), values: d.values}
}
