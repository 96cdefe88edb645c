package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// Modes of Report.Mode.
const (
	modeLive    = "live"
	modeOffline = "offline"
)

// Report is explain's answer, for people (text) and tools (json, yaml).
type Report struct {
	// Request is the request explained, with the implicit groups added.
	Request request.Attributes `json:"request"`
	// Mode is "live" (the cluster's objects) or "offline" (bootstrap objects and manifests);
	// View says exactly what was read.
	Mode string `json:"mode"`
	View string `json:"view"`
	// KubeAPIServer is kube-apiserver's classification.
	KubeAPIServer nativeview.Answer `json:"kubeAPIServer"`
	// Note says what explain could not check (live: a resource the cluster does not serve).
	Note string `json:"note,omitempty"`
	// SeatsUnknown says why the nominal seats are unknown, when they are.
	SeatsUnknown string `json:"seatsUnknown,omitempty"`
	// Ours relates the answer to the operator's FlowSchemas; nil when it has nothing to add.
	Ours *Ours `json:"ours,omitempty"`
	// InProcess is the in-process classifier's answer (--in-process only).
	InProcess *Explanation `json:"inProcess,omitempty"`
}

// Ours relates kube-apiserver's answer to the operator's own FlowSchema for the request.
type Ours struct {
	// FlowSchema is the operator's FlowSchema that matches the request ("" when none does).
	FlowSchema string `json:"flowSchema,omitempty"`
	// Projected, Reason and Message are its Projected condition (live) or projection result
	// (offline).
	Projected bool   `json:"projected"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// Summary is one sentence for people.
	Summary string `json:"summary"`
	// RequestPriority is the RequestPriority of FlowSchema; BoundTo is the native level it is
	// bound to (spec.nativeLevel), "" when it defines a level of its own.
	RequestPriority string `json:"requestPriority,omitempty"`
	BoundTo         string `json:"boundTo,omitempty"`
	// Differences name each spec field of that RequestPriority which kube-apiserver reads
	// differently from the in-process engine.
	Differences []string `json:"differences,omitempty"`
}

// projectedStatus is the projection state of one of our FlowSchemas.
type projectedStatus struct {
	Projected       bool
	Reason, Message string
}

// report classifies a in view and relates the answer to cfg's FlowSchemas, whose projection
// state status returns (false: unknown FlowSchema).
func (o *options) report(mode string, view *nativeview.View, cfg *effective.Config,
	status func(string) (projectedStatus, bool), a *request.Attributes) *Report {
	r := &Report{Request: *a, Mode: mode, View: view.Origin, KubeAPIServer: view.Classify(a)}
	if r.KubeAPIServer.Classified && !r.KubeAPIServer.Exempt && r.KubeAPIServer.NominalSeats == nil {
		r.SeatsUnknown = "kube-apiserver's concurrency limit is unknown"
		if view.SeatsError != nil {
			r.SeatsUnknown += ": " + view.SeatsError.Error()
		}
	}
	r.Ours = ours(cfg, a, &r.KubeAPIServer, status)
	addLevel(r.Ours, cfg, a, view)
	if o.inProcess {
		r.InProcess = Explain(cfg, a)
	}
	return r
}

// ours says which of our FlowSchemas matches a and, when kube-apiserver applies something else,
// why.
func ours(cfg *effective.Config, a *request.Attributes, ans *nativeview.Answer,
	status func(string) (projectedStatus, bool)) *Ours {
	var res classify.Result
	classify.Compile(cfg).Classify(a, &res)
	s := res.Schema
	applied := ans.Source == native.Source("FlowSchema", s.Name)
	switch {
	case !ans.Classified && (s == cfg.MastersBackstop || s == cfg.CatchAll):
		// Said once, as the kube-apiserver line says it: no schema applies, the backstops neither.
		return &Ours{Summary: "no FlowSchema applies, the operator's neither: kube-apiserver serves the request " +
			"unclassified (long-running)"}
	case s == cfg.MastersBackstop:
		return &Ours{Projected: true, Summary: "system:masters is always exempt: kube-apiserver's mandatory exempt schema"}
	case s == cfg.CatchAll && applied:
		return &Ours{FlowSchema: s.Name, Projected: true,
			Summary: "none of the operator's FlowSchemas matches; kube-apiserver applies the projected backstop " + s.Name}
	case s == cfg.CatchAll:
		return &Ours{Summary: "none of the operator's FlowSchemas matches: kube-apiserver's own schemas classify the request"}
	}
	st, known := status(s.Name)
	out := &Ours{FlowSchema: s.Name, Projected: st.Projected, Reason: st.Reason, Message: st.Message}
	switch {
	case !known:
		out.Summary = fmt.Sprintf("the operator's FlowSchema %s matches; its projection state is unknown", s.Name)
	case strings.HasPrefix(ans.Source, native.KindOperator+"/"):
		out.Summary = fmt.Sprintf("the request is the operator's own: its route %s (for %s) takes it ahead of every "+
			"projected schema, including %s", ans.FlowSchema.Name, strings.TrimPrefix(ans.Source, native.KindOperator+"/"), s.Name)
	case !ans.Classified:
		out.Summary = fmt.Sprintf("the operator's FlowSchema %s matches, but kube-apiserver serves the request "+
			"unclassified (long-running): no FlowSchema applies", s.Name)
	case applied:
		out.Summary = fmt.Sprintf("the operator's FlowSchema %s matches; kube-apiserver applies its projection %s",
			s.Name, ans.FlowSchema.Name)
	case !st.Projected:
		out.Summary = fmt.Sprintf("the operator's FlowSchema %s matches, but it is not projected (%s): %s", s.Name,
			st.Reason, st.Message)
	default:
		out.Summary = fmt.Sprintf("the operator's FlowSchema %s matches and is projected, but kube-apiserver's %s "+
			"(matchingPrecedence %d) takes the request first", s.Name, ans.FlowSchema.Name, ans.Precedence)
	}
	return out
}

// write prints the report in format (text, json or yaml).
func (r *Report) write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "yaml":
		out, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	return r.WriteText(w)
}

// describeRequest is the request in one line.
func describeRequest(a *request.Attributes) string {
	parts := []string{"user=" + a.User}
	if len(a.Groups) > 0 {
		parts = append(parts, "groups="+strings.Join(a.Groups, ","))
	}
	parts = append(parts, "verb="+a.Verb)
	if !a.ResourceRequest {
		return strings.Join(append(parts, "path="+a.Path), " ")
	}
	for _, kv := range [][2]string{{"apiGroup", a.APIGroup}, {"resource", a.Resource},
		{"subresource", a.Subresource}, {"namespace", a.Namespace}, {"name", a.Name}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}
