package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"

	demov1alpha1 "example.com/aggregated/apis/demo/v1alpha1"
	"example.com/aggregated/openapi"
	"example.com/aggregated/registry"
)

// kubeVersion is the Kubernetes version of the pinned k8s.io/apiserver (v0.37), which the
// server reports as its effective version.
const kubeVersion = "1.37"

// Server is the sample aggregated API server.
type Server struct {
	generic     *genericapiserver.GenericAPIServer
	source      *apf.InformerSource
	muxComplete chan struct{}
}

// New builds the server; Run starts it. Its flow-control metrics go to the legacy registry
// (the server's /metrics), so a process holds one Server.
func New(o *Options) (*Server, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	config, err := genericConfig(o)
	if err != nil {
		return nil, err
	}
	// The filter's wait limit is a quarter of the server's request timeout, as upstream's.
	filter, err := apf.New(apf.Options{ServerConcurrencyLimit: o.ConcurrencyLimit,
		RequestTimeout: config.RequestTimeout, Registerer: legacyregistry.Registerer()})
	if err != nil {
		return nil, err
	}
	s := &Server{muxComplete: make(chan struct{})}
	if s.source, err = newSource(o.Kubeconfig, filter); err != nil {
		return nil, err
	}
	config.BuildHandlerChainFunc = handlerChain(filter, s.muxComplete)
	config.AddReadyzChecks(healthz.NamedCheck("apf-configuration", s.configurationSynced))
	if s.generic, err = config.Complete().New("demo-apiserver", genericapiserver.NewEmptyDelegate()); err != nil {
		return nil, err
	}
	if err := s.install(o); err != nil {
		return nil, err
	}
	// The filter's explain and dumps, for the server's operators: the server's authorization
	// checks them (a non-resource get of /debug/apf-operator/...), as kube-apiserver's APF dumps.
	apiserverfilter.InstallDebugHandlers(s.generic.Handler.NonGoRestfulMux, filter, config.Authorization.Authorizer)
	return s, nil
}

// newSource returns the informer source of the cluster kubeconfig names.
func newSource(kubeconfig string, filter *apf.Filter) (*apf.InformerSource, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig %q: %w: pass a readable file with --kubeconfig", kubeconfig, err)
	}
	return apf.NewInformerSource(cfg, filter, klog.NewKlogr().WithName("apf-source"))
}

// genericConfig is the generic server's configuration: delegated authentication and
// authorization, no etcd, no admission, upstream's limiters off. New adds the handler chain.
func genericConfig(o *Options) (*genericapiserver.RecommendedConfig, error) {
	opts, err := recommendedOptions(o)
	if err != nil {
		return nil, err
	}
	config := genericapiserver.NewRecommendedConfig(Codecs)
	config.EffectiveVersion = compatibility.NewEffectiveVersionFromString(kubeVersion, "", "")
	// Server-side apply needs the types' OpenAPI models.
	namer := apiopenapi.NewDefinitionNamer(Scheme)
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	config.OpenAPIV3Config.Info.Title = "demo-apiserver"
	if err := opts.ApplyTo(config); err != nil {
		return nil, err
	}
	config.MaxRequestsInFlight, config.MaxMutatingRequestsInFlight = 0, 0
	return config, checkChainConfig(&config.Config)
}

// recommendedOptions are k8s.io/apiserver's recommended options for an aggregated server,
// without etcd, admission, the core API informers and upstream's flow control.
func recommendedOptions(o *Options) (*genericoptions.RecommendedOptions, error) {
	opts := genericoptions.NewRecommendedOptions("", nil)
	opts.Etcd, opts.Admission, opts.CoreAPI = nil, nil, nil
	opts.Features.EnablePriorityAndFairness = false
	opts.Authentication.RemoteKubeConfigFile = o.Kubeconfig
	opts.Authorization.RemoteKubeConfigFile = o.Kubeconfig
	serving := opts.SecureServing
	serving.Listener, serving.BindPort = o.Listener, o.BindPort
	if o.BindAddress != nil {
		serving.BindAddress = o.BindAddress
	}
	serving.ServerCert.CertKey.CertFile, serving.ServerCert.CertKey.KeyFile = o.ServingCertFile, o.ServingKeyFile
	serving.ServerCert.CertDirectory = o.CertDir
	err := serving.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")})
	return opts, err
}

// configurationSynced is the readiness check: ready once the filter has the cluster's
// RequestPriorities and FlowSchemas.
func (s *Server) configurationSynced(*http.Request) error {
	if !s.source.HasSynced() {
		return errors.New("the RequestPriority and FlowSchema informers have not synced yet")
	}
	return nil
}

// install adds the widgets API and the informer source's start-up hook.
func (s *Server) install(o *Options) error {
	group := genericapiserver.NewDefaultAPIGroupInfo(demov1alpha1.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	group.VersionedResourcesStorageMap[demov1alpha1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"widgets": registry.NewWidgets(o.ListDelay),
	}
	if err := s.generic.InstallAPIGroup(&group); err != nil {
		return err
	}
	return s.generic.AddPostStartHook("apf-configuration", func(ctx genericapiserver.PostStartHookContext) error {
		go func() {
			if err := s.source.Run(ctx); err != nil {
				klog.ErrorS(err, "Watching RequestPriorities and FlowSchemas failed")
			}
		}()
		return nil
	})
}

// Run serves until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	go closeWhenMuxComplete(s.generic, s.muxComplete, ctx.Done())
	return s.generic.PrepareRun().RunWithContext(ctx)
}
