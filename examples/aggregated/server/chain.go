package server

import (
	"fmt"
	"net/http"

	"k8s.io/apiserver/pkg/endpoints/filterlatency"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/filters/impersonation"
	genericfeatures "k8s.io/apiserver/pkg/features"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/server/routine"

	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"
)

// handlerChain returns a Config.BuildHandlerChainFunc that mirrors
// genericapiserver.DefaultBuildHandlerChain of k8s.io/apiserver v0.37.0 filter by filter, with
// filter in the slot of upstream's WithPriorityAndFairness (and of WithMaxInFlightLimit, which
// upstream uses when FlowControl is nil): after authentication and impersonation, before
// authorization. DefaultBuildHandlerChain offers no hook in the middle, hence the copy; compare
// it with that function when k8s.io/apiserver is upgraded.
//
// Three upstream filters read the Config's unexported lifecycle signals. muxComplete stands in
// for MuxAndDiscoveryComplete (see closeWhenMuxComplete); WithWatchTerminationDuringShutdown
// and WithRetryAfter are left out, so checkChainConfig rejects the options that enable them.
func handlerChain(filter *apf.Filter, muxComplete <-chan struct{}) func(http.Handler, *genericapiserver.Config) http.Handler {
	return func(apiHandler http.Handler, c *genericapiserver.Config) http.Handler {
		handler := withAccessControl(apiHandler, filter, c)
		return withRequestHandling(handler, c, muxComplete)
	}
}

// withAccessControl wraps handler in authorization, flow control, impersonation, audit and
// authentication, innermost first.
func withAccessControl(handler http.Handler, filter *apf.Filter, c *genericapiserver.Config) http.Handler {
	handler = filterlatency.TrackCompleted(handler)
	handler = genericapifilters.WithAuthorization(handler, c.Authorization.Authorizer, c.Serializer)
	handler = filterlatency.TrackStarted(handler, c.TracerProvider, "authorization")

	handler = filterlatency.TrackCompleted(handler)
	handler = apiserverfilter.WithPriorityAndFairness(handler, filter, c.LongRunningFunc)
	handler = filterlatency.TrackStarted(handler, c.TracerProvider, "priorityandfairness")

	handler = filterlatency.TrackCompleted(handler)
	if c.FeatureGate.Enabled(genericfeatures.ConstrainedImpersonation) {
		handler = impersonation.WithConstrainedImpersonation(handler, c.Authorization.Authorizer, c.Serializer)
		handler = filterlatency.TrackStarted(handler, c.TracerProvider, "constrainedimpersonation")
	} else {
		handler = impersonation.WithImpersonation(handler, c.Authorization.Authorizer, c.Serializer)
		handler = filterlatency.TrackStarted(handler, c.TracerProvider, "impersonation")
	}

	handler = filterlatency.TrackCompleted(handler)
	handler = genericapifilters.WithAudit(handler, c.AuditBackend, c.AuditPolicyRuleEvaluator, c.LongRunningFunc)
	handler = filterlatency.TrackStarted(handler, c.TracerProvider, "audit")

	failedHandler := genericapifilters.Unauthorized(c.Serializer)
	failedHandler = genericapifilters.WithFailedAuthenticationAudit(failedHandler, c.AuditBackend, c.AuditPolicyRuleEvaluator)
	handler = genericapifilters.WithTracing(handler, c.TracerProvider)
	failedHandler = filterlatency.TrackCompleted(failedHandler)
	handler = filterlatency.TrackCompleted(handler)
	handler = genericapifilters.WithAuthentication(handler, c.Authentication.Authenticator, failedHandler,
		c.Authentication.APIAudiences, c.Authentication.RequestHeaderConfig)
	return filterlatency.TrackStarted(handler, c.TracerProvider, "authentication")
}

// withRequestHandling wraps handler in the filters outside authentication: CORS, timeouts,
// wait groups, caching and security headers, logging, request info and panic recovery.
func withRequestHandling(handler http.Handler, c *genericapiserver.Config, muxComplete <-chan struct{}) http.Handler {
	handler = genericfilters.WithCORS(handler, c.CorsAllowedOriginList, nil, nil, nil, "true")
	handler = genericapifilters.WithWarningRecorder(handler)
	handler = genericfilters.WithTimeoutForNonLongRunningRequests(handler, c.LongRunningFunc)
	handler = genericapifilters.WithRequestDeadline(handler, c.AuditBackend, c.AuditPolicyRuleEvaluator,
		c.LongRunningFunc, c.Serializer, c.RequestTimeout)
	handler = genericfilters.WithWaitGroup(handler, c.LongRunningFunc, c.NonLongRunningRequestWaitGroup)
	if c.SecureServing != nil && !c.SecureServing.DisableHTTP2 && c.GoawayChance > 0 {
		handler = genericfilters.WithProbabilisticGoaway(handler, c.GoawayChance)
	}
	handler = genericapifilters.WithCacheControl(handler)
	handler = genericfilters.WithHSTS(handler, c.HSTSDirectives)
	handler = genericfilters.WithHTTPLogging(handler)
	handler = genericapifilters.WithLatencyTrackers(handler)
	if c.FeatureGate.Enabled(genericfeatures.APIServingWithRoutine) {
		handler = routine.WithRoutine(handler, c.LongRunningFunc)
	}
	handler = genericapifilters.WithRequestInfo(handler, c.RequestInfoResolver)
	handler = genericapifilters.WithRequestReceivedTimestamp(handler)
	handler = genericapifilters.WithMuxAndDiscoveryComplete(handler, muxComplete)
	handler = genericfilters.WithPanicRecovery(handler, c.RequestInfoResolver)
	return genericapifilters.WithAuditInit(handler)
}

// checkChainConfig rejects the options whose filters handlerChain leaves out.
func checkChainConfig(c *genericapiserver.Config) error {
	if c.ShutdownWatchTerminationGracePeriod > 0 {
		return fmt.Errorf("Config.ShutdownWatchTerminationGracePeriod is %s: the sample server's handler chain "+
			"has no watch termination filter; set it to 0", c.ShutdownWatchTerminationGracePeriod)
	}
	if c.ShutdownSendRetryAfter {
		return fmt.Errorf("Config.ShutdownSendRetryAfter is true: the sample server's handler chain " +
			"has no retry-after filter; set it to false")
	}
	if c.FlowControl != nil {
		return fmt.Errorf("Config.FlowControl is set: upstream's flow control would not run in this chain; " +
			"leave it nil (RecommendedOptions.Features.EnablePriorityAndFairness = false)")
	}
	return nil
}

// closeWhenMuxComplete closes done once every signal of the server's
// MuxAndDiscoveryCompleteSignals has fired, as upstream's MuxAndDiscoveryComplete does; until
// then a 404 is answered with 503 so that clients retry.
func closeWhenMuxComplete(s *genericapiserver.GenericAPIServer, done chan<- struct{}, stop <-chan struct{}) {
	for _, signal := range s.MuxAndDiscoveryCompleteSignals() {
		select {
		case <-signal:
		case <-stop:
			return
		}
	}
	close(done)
}
