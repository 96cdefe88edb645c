package webhooks

import (
	"context"
	"fmt"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// Options configure the webhooks.
type Options struct {
	// ExemptGroups may create and update objects that configure the exempt level 0. Nil means
	// system:masters.
	ExemptGroups []string
	// ExemptUsers may do so too. The operator's own user (its service account) is always added:
	// SetupWithManager learns it from the API server, and fails when it cannot unless
	// ExemptUsers is set.
	ExemptUsers []string
	// NativeWarnings adds an admission warning to every object kube-apiserver could not enforce
	// exactly once projected (enforcement native); the object is admitted all the same.
	NativeWarnings bool
	// NativeShareBudget refuses RequestPriority shares past the native share budget
	// (enforcement native): kube-apiserver's own levels then keep at least
	// 100 - NativeMaxSeatLossPercent percent of their share of the server.
	NativeShareBudget        bool
	NativeMaxSeatLossPercent int32
	// EventRateLimit, when set, serves the EventRateLimit webhook on EventsPath with this
	// engine; nil leaves event creation alone.
	EventRateLimit *eventratelimit.Engine
}

// selfLookupTimeout bounds the request that learns the operator's own user name.
const selfLookupTimeout = 30 * time.Second

// SetupWithManager registers the validating webhooks (and the EventRateLimit one when
// Options.EventRateLimit is set) with the manager's webhook server. The
// cache field indexes (index.Register) must be registered before the manager starts.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	ctx, cancel := context.WithTimeout(context.Background(), selfLookupTimeout)
	defer cancel()
	self, err := ownUser(ctx, mgr.GetConfig())
	if err != nil {
		if len(opts.ExemptUsers) == 0 {
			return err
		}
		mgr.GetLogger().Info("Exempt level limited to the configured users and groups", "reason", err.Error())
	}
	access := exemptAccess(opts, self)
	objects := cacheObjects{reader: mgr.GetCache()}
	rpv := &RequestPriorityValidator{Objects: objects, Access: access, NativeWarnings: opts.NativeWarnings}
	if opts.NativeShareBudget {
		totals, err := newShareTotals(ctx, mgr.GetCache(), opts.NativeMaxSeatLossPercent)
		if err != nil {
			return err
		}
		rpv.Shares, rpv.Donors = totals, cacheDonors{reader: mgr.GetCache()}
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.RequestPriority{}).
		WithValidator(rpv).
		WithLogConstructor(requestLogger).
		Complete(); err != nil {
		return fmt.Errorf("registering the RequestPriority webhook: %w", err)
	}
	// Registered by hand rather than by the builder: the size check runs before the decoding.
	fsw := flowSchemaWebhook(mgr.GetScheme(), &FlowSchemaValidator{Objects: objects, Access: access,
		NativeWarnings: opts.NativeWarnings})
	fsw.LogConstructor = requestLogger
	mgr.GetWebhookServer().Register(FlowSchemaPath, fsw)
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.EventRateLimit{}).
		WithValidator(&EventRateLimitValidator{}).WithLogConstructor(requestLogger).Complete(); err != nil {
		return fmt.Errorf("registering the EventRateLimit webhook: %w", err)
	}
	if opts.EventRateLimit != nil {
		mgr.GetWebhookServer().Register(EventsPath, &webhook.Admission{
			Handler: &EventRateLimitHandler{Engine: opts.EventRateLimit}, LogConstructor: requestLogger})
	}
	return nil
}

// exemptAccess applies the defaults of Options and adds the operator's own user.
func exemptAccess(opts Options, self string) validation.ExemptAccess {
	access := validation.ExemptAccess{Groups: opts.ExemptGroups, Users: slices.Clone(opts.ExemptUsers)}
	if access.Groups == nil {
		access.Groups = []string{validation.MastersGroup}
	}
	if self != "" && !slices.Contains(access.Users, self) {
		access.Users = append(access.Users, self)
	}
	return access
}

// ownUser asks the API server who the operator is (a SelfSubjectReview, which every
// authenticated user may create), so that its own service account may manage the default
// level-0 objects.
func ownUser(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("learning the operator's own user name: %w", err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("learning the operator's own user name (SelfSubjectReview): %w; "+
			"allow the review or list the operator's service account in the exempt users", err)
	}
	return review.Status.UserInfo.Username, nil
}
