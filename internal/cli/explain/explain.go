// Package explain implements `apf-operator explain` (and `kubectl apf explain`): how
// kube-apiserver classifies one request — the native FlowSchema, its priority level, the
// level's nominal seats and the flow distinguisher — and, when the operator's FlowSchema that
// matches the request is not what kube-apiserver applies, why (its Projected condition, or the
// kube-apiserver schema that takes the request first).
//
// Live mode (no -f) reads the cluster's real native objects (internal/nativeview.FromCluster),
// so the answer is kube-apiserver's whatever its version and whoever added objects. With -f it
// works offline on manifests: kube-apiserver's bootstrap objects of the vendored
// k8s.io/apiserver with the manifests' projection in place of the operator's objects, and says
// so. --in-process adds the operator's in-process classifier's answer (the library filter's).
//
// The request's identity is kubectl's --as/--as-group, with the groups kube-apiserver adds
// (nativeview.Groups), as in `kubectl auth can-i --as`: it names the request to explain, and
// the cluster is read with the kubeconfig's own identity, never impersonated.
package explain

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// options are the command's flags.
type options struct {
	config   *genericclioptions.ConfigFlags
	paths    []string
	verb     string
	resource string
	name     string
	path     string
	output   string
	// inProcess adds the in-process classifier's answer.
	inProcess bool
	// operator and unmatched describe the operator's settings for the offline projection.
	operator  string
	unmatched string
	// kubeVersion picks the bootstrap set of the offline answer.
	kubeVersion string
	// errOut is standard error, for hints.
	errOut io.Writer
	// Deprecated spellings, kept for scripts written before --as.
	user, apiGroup, subresource string
	groups                      []string
}

// NewCommand returns `explain`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newCommand(streams)
	return cmd
}

// newCommand returns `explain` and the options its flags fill.
func newCommand(streams genericiooptions.IOStreams) (*cobra.Command, *options) {
	o := &options{config: genericclioptions.NewConfigFlags(true), errOut: streams.ErrOut}
	o.config.AuthInfoName = nil // --user names the request's user (deprecated), not a kubeconfig user
	cmd := &cobra.Command{
		Use:   "explain --as USER [--as-group GROUP]... [--verb VERB] (--resource RESOURCE[.GROUP][/SUB] [-n NS] [--name NAME] | --path /PATH) [-f PATH]...",
		Short: "Show how kube-apiserver classifies a request, and why",
		Long: `Shows how kube-apiserver classifies a request made as --as (with --as-group): its FlowSchema,
priority level, the level's nominal seats and the flow distinguisher, and, when the operator's
FlowSchema that matches is not what kube-apiserver applies, why.

Without -f it reads the live cluster's native FlowSchemas and priority levels (all of them:
kube-apiserver's own, any other, and the operator's projection) with the kubeconfig's identity;
--as and --as-group name the request to explain, as for 'kubectl auth can-i', and the cluster is
not read impersonated. Groups are completed as kube-apiserver does: system:authenticated, and a
service account's system:serviceaccounts and system:serviceaccounts:<namespace>.

With -f it works offline on manifests: kube-apiserver's bootstrap objects of --kubernetes-version
(1.29 to the newest known, the default), the manifests projected in place of the operator's objects.`,
		Example: `  apf-operator explain --as alice --as-group team-a --verb list --resource pods -n team-a
  apf-operator explain --as system:serviceaccount:ci:deployer --verb patch --resource deployments.apps/scale -n ci --name web
  apf-operator explain --as alice --verb get --path /healthz -o json
  apf-operator explain -f ./clusters/prod/apf/ --as alice --verb create --resource pods -n team-a --in-process`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			deprecated.Warn(c.Flags(), streams.ErrOut)
			if c.Flags().Changed("kubernetes-version") && len(o.paths) == 0 {
				return cmdutil.UsageErrorf("--kubernetes-version picks the bootstrap set of an offline answer: it " +
					"needs -f (live, the cluster's own objects are read)")
			}
			a, err := o.attributes()
			if err != nil {
				return err
			}
			r, err := o.explain(c.Context(), a)
			if err != nil {
				return err
			}
			return r.write(streams.Out, o.output)
		},
	}
	o.addFlags(cmd.Flags())
	cmdutil.CompleteValues(cmd, "output", "text", "json", "yaml")
	cmdutil.CompleteValues(cmd, "verb", verbs()...)
	cmdutil.CompleteValues(cmd, "kubernetes-version", bootstrapset.Versions()...)
	cmdutil.CompleteValues(cmd, "native-unmatched", string(native.UnmatchedKubeAPIServer), string(native.UnmatchedOperator))
	return cmd, o
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&o.paths, "filename", "f", nil, "manifest file or directory (recursively), or - for stdin; "+
		"repeatable or comma-separated, as kubectl's -f. Offline: kube-apiserver's bootstrap objects with these projected, not the cluster")
	fs.StringVar(&o.verb, "verb", "get", "the request's verb, as kube-apiserver names it: get, list, watch, create, update, patch, "+
		"delete, deletecollection, proxy; for --path the lower-case HTTP method (get, head, post, put, patch, delete, options)")
	fs.StringVar(&o.resource, "resource", "", "the resource as kubectl writes it: RESOURCE[.VERSION][.GROUP][/SUBRESOURCE], "+
		"e.g. pods, pods/status, deployments.apps, deployments.v1.apps/scale; live, short names (po, deploy) are expanded by the cluster's discovery")
	fs.StringVar(&o.name, "name", "", "the object's name (empty: the collection)")
	fs.StringVar(&o.path, "path", "", "the URL path of a non-resource request, e.g. /healthz (instead of --resource)")
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text, json or yaml")
	fs.BoolVar(&o.inProcess, "in-process", false, "also show the operator's in-process classifier's answer "+
		"(the library filter for servers built on k8s.io/apiserver; nothing in a cluster with native enforcement runs it)")
	fs.StringVar(&o.operator, "operator-service-account", "", "with -f: the operator's service account, NAMESPACE/NAME, "+
		"whose own route the projection includes (live mode reads the cluster's route)")
	fs.StringVar(&o.unmatched, "native-unmatched", string(native.UnmatchedKubeAPIServer), "with -f: the operator's "+
		"--native-unmatched (kube-apiserver or operator) for the projection (live mode reads the cluster's objects)")
	fs.StringVar(&o.kubeVersion, "kubernetes-version", bootstrapset.Newest(), "with -f: the Kubernetes version whose "+
		"bootstrap FlowSchemas and priority levels stand for the cluster ("+strings.Join(bootstrapset.Versions(), ", ")+")")
	o.config.AddFlags(fs)
	fs.Lookup("as").Usage = "the user whose request to explain (required), e.g. alice or system:serviceaccount:NS:NAME; " +
		"the cluster is read with the kubeconfig's identity, not impersonated"
	fs.Lookup("as-group").Usage = "a group of the request's user; repeatable. system:authenticated and a service " +
		"account's groups are added as kube-apiserver adds them"
	for _, irrelevant := range []string{"as-uid", "as-user-extra"} { // classification reads neither
		_ = fs.MarkHidden(irrelevant)
	}
	fs.Lookup("namespace").Usage = "the request's namespace (empty: a cluster-scoped request)"
	fs.StringVar(&o.user, "user", "", "the request's user")
	fs.StringSliceVar(&o.groups, "groups", nil, "the request's groups, comma-separated")
	fs.StringVar(&o.apiGroup, "api-group", "", "the resource's API group")
	fs.StringVar(&o.subresource, "subresource", "", "the subresource")
	deprecated.Hide(fs)
}

// deprecated are the spellings kept for scripts written before --as; their notices go to
// standard error.
var deprecated = cmdutil.Deprecated{"user": "--as", "groups": "--as-group", "api-group": "--resource RESOURCE.GROUP",
	"subresource": "--resource RESOURCE/SUBRESOURCE"}

// attributes builds the request from the flags, with the implicit groups; errors are usage
// errors naming the flag and the fix.
func (o *options) attributes() (*request.Attributes, error) {
	a := &request.Attributes{User: *o.config.Impersonate, Groups: *o.config.ImpersonateGroup, Verb: o.verb,
		Namespace: *o.config.Namespace, Name: o.name, Path: o.path, ResourceRequest: o.path == ""}
	if a.User == "" {
		a.User = o.user
	}
	a.Groups = nativeview.Groups(a.User, append(a.Groups, o.groups...))
	switch {
	case a.User == "":
		return nil, cmdutil.UsageErrorf("--as is required: the user whose request to explain, e.g. --as alice or " +
			"--as system:serviceaccount:NAMESPACE:NAME")
	case o.path == "" && o.resource == "":
		return nil, cmdutil.UsageErrorf("give --resource for a resource request or --path for a non-resource request")
	case o.path != "" && !strings.HasPrefix(o.path, "/"):
		return nil, cmdutil.UsageErrorf("--path %q: a URL path starts with /, e.g. --path /%s", o.path, o.path)
	case o.path != "" && (o.resource != "" || a.Namespace != "" || a.Name != "" || o.apiGroup != "" || o.subresource != ""):
		return nil, cmdutil.UsageErrorf("--path describes a non-resource request: drop --resource, --namespace and --name")
	case o.output != "text" && o.output != "json" && o.output != "yaml":
		return nil, cmdutil.UsageErrorf("-o %q: use text, json or yaml", o.output)
	}
	if err := checkVerb(a.Verb, a.ResourceRequest); err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	if a.ResourceRequest {
		if err := parseResource(o.resource, a); err != nil {
			return nil, cmdutil.UsageErrorf("%v", err)
		}
		if o.apiGroup != "" {
			a.APIGroup = o.apiGroup
		}
		if o.subresource != "" {
			a.Subresource = o.subresource
		}
	}
	if _, err := parseServiceAccount(o.operator); err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	if _, err := native.ParseUnmatched(o.unmatched); err != nil {
		return nil, cmdutil.UsageErrorf("--native-unmatched: %v", err)
	}
	if _, err := bootstrapset.ForVersion(o.kubeVersion); err != nil {
		return nil, cmdutil.UsageErrorf("--kubernetes-version: %v", err)
	}
	return a, nil
}

// explain answers for a, live or offline.
func (o *options) explain(ctx context.Context, a *request.Attributes) (*Report, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(o.paths) > 0 {
		return o.offline(a)
	}
	return o.live(ctx, a)
}

// parseServiceAccount reads --operator-service-account, NAMESPACE/NAME; nil for "".
func parseServiceAccount(s string) (*native.ServiceAccount, error) {
	if s == "" {
		return nil, nil
	}
	ns, name, ok := cutServiceAccount(s)
	if !ok {
		return nil, fmt.Errorf("--operator-service-account %q: want NAMESPACE/NAME, e.g. apf-system/apf-operator", s)
	}
	return &native.ServiceAccount{Namespace: ns, Name: name}, nil
}
