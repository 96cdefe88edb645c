// Package explain implements `apf-operator explain`: given the APF configuration (manifests or
// the live cluster) and a request's attributes, it prints how the filter classifies the
// request — the matching FlowSchema and which of its conjunctions matched, the effective
// RequestPriority (actual or backstop), the flow distinguisher, the width, and the hand of
// queues shuffle sharding deals the flow. It runs the engine's own code (effective.Compute,
// classify, shufflesharding), so its answer is the filter's answer. It also says how
// kube-apiserver classifies the request once the configuration is projected onto its own flow
// control (internal/native): which native FlowSchema takes it (a projected one, or one of
// kube-apiserver's own that come first, such as its mandatory exempt schema for system:masters
// or probes), and why the chosen FlowSchema is not projected, if it is not.
package explain

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
	"github.com/apf-operator/apf-operator/internal/native"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

type options struct {
	paths      []string
	kubeconfig string
	// kubeContext is the kubeconfig context to use (empty: the current one).
	kubeContext string
	output      string
	attrs       request.Attributes
	groups      string
	// operator is the operator's service account, NAMESPACE/NAME (empty: read from the live
	// cluster's route, or none).
	operator string
	// unmatched is --native-unmatched, for the kube-apiserver line.
	unmatched string
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("apf-operator explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: apf-operator explain [-f PATH]... --user NAME [--groups G1,G2] --verb VERB (--resource R [--namespace NS] ... | --path /PATH)\n\n"+
			"Shows how the filter classifies a request. Without -f it reads the live cluster (--kubeconfig, --context).\n\n")
		fs.PrintDefaults()
	}
	paths := (*validate.PathList)(&o.paths)
	fs.Var(paths, "f", "manifest file or directory (recursively), or - for stdin; repeatable. Without -f, the live cluster is read")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for the live cluster (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	fs.StringVar(&o.kubeContext, "context", "", "kubeconfig context of the live cluster (default: the current context)")
	fs.StringVar(&o.output, "o", "text", "output format: text or json")
	fs.StringVar(&o.attrs.User, "user", "", "the requesting user's name (required)")
	fs.StringVar(&o.groups, "groups", "", "comma-separated groups of the user")
	fs.StringVar(&o.attrs.Verb, "verb", "get", "Kubernetes verb of a resource request (get, list, watch, create, update, patch, delete, deletecollection), or the lower-case HTTP method of a non-resource request")
	fs.StringVar(&o.attrs.APIGroup, "api-group", "", "API group of a resource request (empty: the core group)")
	fs.StringVar(&o.attrs.Resource, "resource", "", "resource of a resource request, e.g. pods")
	fs.StringVar(&o.attrs.Subresource, "subresource", "", "subresource of a resource request, e.g. status")
	fs.StringVar(&o.attrs.Namespace, "namespace", "", "namespace of a resource request")
	fs.StringVar(&o.attrs.Name, "name", "", "object name of a resource request")
	fs.StringVar(&o.attrs.Path, "path", "", "path of a non-resource request, e.g. /healthz (instead of --resource)")
	fs.StringVar(&o.operator, "operator-service-account", "", "the operator's service account, NAMESPACE/NAME, whose "+
		"requests its own native route takes (default: read from the live cluster's route; none with -f)")
	fs.StringVar(&o.unmatched, "native-unmatched", string(native.UnmatchedKubeAPIServer),
		"the operator's --native-unmatched, for the kube-apiserver line: kube-apiserver (requests no projected FlowSchema matches go to its own schemas) or operator (to the projected backstop)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.paths = append(o.paths, fs.Args()...)
	return o, o.complete()
}

func (o *options) complete() error {
	switch {
	case o.attrs.User == "":
		return errors.New("--user is required")
	case o.attrs.Path == "" && o.attrs.Resource == "":
		return errors.New("give --resource for a resource request or --path for a non-resource request")
	case o.attrs.Path != "" && (o.attrs.Resource != "" || o.attrs.Namespace != "" || o.attrs.APIGroup != "" ||
		o.attrs.Subresource != "" || o.attrs.Name != ""):
		return errors.New("--path describes a non-resource request: drop --resource, --namespace, --api-group, --subresource and --name")
	case o.output != "text" && o.output != "json":
		return fmt.Errorf("-o %q: want text or json", o.output)
	}
	if _, err := parseServiceAccount(o.operator); err != nil {
		return err
	}
	if _, err := native.ParseUnmatched(o.unmatched); err != nil {
		return fmt.Errorf("--native-unmatched: %w", err)
	}
	o.attrs.ResourceRequest = o.attrs.Path == ""
	for _, g := range strings.Split(o.groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			o.attrs.Groups = append(o.attrs.Groups, g)
		}
	}
	return nil
}

// Run executes the command and returns its exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "apf-operator explain:", err)
		return ExitUsage
	}
	rps, fss, err := load(context.Background(), o, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "apf-operator explain:", err)
		return ExitError
	}
	operator, _ := parseServiceAccount(o.operator)
	if operator == nil && len(o.paths) == 0 {
		operator = operatorFromCluster(context.Background(), o.kubeconfig, o.kubeContext)
	}
	e := ExplainWithOperator(effective.Compute(rps, fss), &o.attrs, operator, native.Unmatched(o.unmatched))
	if o.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(e)
	} else {
		err = e.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "apf-operator explain:", err)
		return ExitError
	}
	return ExitOK
}

func load(ctx context.Context, o *options, stdin io.Reader) ([]flowv1.RequestPriority, []flowv1.FlowSchema, error) {
	if len(o.paths) > 0 {
		return validate.LoadObjects(o.paths, stdin)
	}
	return loadCluster(ctx, o.kubeconfig, o.kubeContext)
}

// Explanation is the classification of one request, for people (WriteText) and tools (JSON).
type Explanation struct {
	Request         request.Attributes `json:"request"`
	FlowSchema      string             `json:"flowSchema"`
	Backstop        bool               `json:"backstop"`
	Conjunction     int                `json:"conjunction"`
	RequestPriority PriorityInfo       `json:"requestPriority"`
	Distinguisher   string             `json:"distinguisher"`
	Width           int                `json:"width"`
	LongRunning     bool               `json:"longRunning"`
	FlowHash        string             `json:"flowHash"`
	Hand            []int              `json:"hand,omitempty"`
	// Native is how kube-apiserver classifies it with the configuration projected.
	Native *NativeInfo `json:"native"`
}

// PriorityInfo describes the effective RequestPriority of a request.
type PriorityInfo struct {
	Name             string  `json:"name"`
	Level            int32   `json:"level"`
	Backstop         bool    `json:"backstop"`
	Exempt           bool    `json:"exempt"`
	Shares           int32   `json:"assuredConcurrencyShares,omitempty"`
	AssuredFraction  float64 `json:"assuredConcurrencyFraction,omitempty"`
	QueuesPerWidth   int32   `json:"queuesPerWidth,omitempty"`
	HandSize         int32   `json:"handSize,omitempty"`
	QueueLengthLimit int32   `json:"queueLengthLimit,omitempty"`
}

// Explain classifies a against cfg, with no operator route; unmatched is the projection's
// --native-unmatched choice ("" for the default), for the kube-apiserver part.
func Explain(cfg *effective.Config, a *request.Attributes, unmatched native.Unmatched) *Explanation {
	return ExplainWithOperator(cfg, a, nil, unmatched)
}

// ExplainWithOperator classifies a against cfg; kube-apiserver's answer includes the
// operator's own route for its service account operator (nil: none), and unmatched is the
// projection's --native-unmatched choice.
func ExplainWithOperator(cfg *effective.Config, a *request.Attributes, operator *native.ServiceAccount,
	unmatched native.Unmatched) *Explanation {
	var r classify.Result
	classify.Compile(cfg).Classify(a, &r)
	p := r.Schema.Priority
	e := &Explanation{
		Request: *a, FlowSchema: r.Schema.Name, Backstop: r.Schema.Backstop, Conjunction: r.Conjunction,
		RequestPriority: PriorityInfo{Name: p.Name, Level: p.Level, Backstop: p.Backstop, Exempt: p.Exempt(),
			Shares: p.Shares, AssuredFraction: cfg.AssuredFraction(p), QueuesPerWidth: p.QueuesPerWidth,
			HandSize: p.HandSize, QueueLengthLimit: p.QueueLengthLimit},
		Distinguisher: r.Distinguisher, Width: r.Width, LongRunning: r.LongRunning,
		FlowHash: fmt.Sprintf("%#016x", r.FlowHash),
	}
	e.Hand = apf.Hand(p, r.FlowHash)
	e.Native = explainNative(cfg, r.Schema, a, operator, unmatched)
	return e
}
