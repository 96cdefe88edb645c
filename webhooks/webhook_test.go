package webhooks

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// The tests below share one API server: every object has a name and a level of its own.

func TestValidObjectsAcceptedWithWarnings(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	c, warnings := s.clientAs(t, "", nil)
	rp := queuedRP("it-valid", 5100, 64, 6)
	if err := c.Create(ctx, rp); err != nil {
		t.Fatalf("Creating a valid RequestPriority: %v", err)
	}
	if got := warnings.take(); len(got) != 0 {
		t.Errorf("warnings = %q, want none", got)
	}
	s.waitCached(t, rp)

	fs := flowSchema("it-valid", "it-valid", &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceUser,
		Transformation: &v1alpha1.Transformation{Regex: "^(tenant-[a-z]+)-.*$"}})
	if err := c.Create(ctx, fs); err != nil {
		t.Fatalf("Creating a valid FlowSchema: %v", err)
	}
	// Valid, but kube-apiserver cannot enforce a transformation: admitted with a warning.
	notEnforced := `FlowSchema "it-valid" will not be enforced by kube-apiserver (reported as Projected=False): `
	assertWarnings(t, warnings.take(), notEnforced+"spec.flowDistinguisher.transformation.regex",
		notEnforced+"spec.match[0].and[0].patternMatch")

	dangling := flowSchema("it-dangling", "it-not-yet-applied", nil)
	dangling.Spec.Match = []v1alpha1.Conjunction{}
	if err := c.Create(ctx, dangling); err != nil {
		t.Fatalf("A FlowSchema naming a missing RequestPriority must be accepted (GitOps order): %v", err)
	}
	assertWarnings(t, warnings.take(),
		"spec.match: the FlowSchema matches no request",
		`spec.requestPriority.name: RequestPriority "it-not-yet-applied" not found`)
}

func TestDuplicateLevelRejected(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	first := queuedRP("it-dup-a", 5200, 1, 0)
	if err := s.admin.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, first)
	err := s.admin.Create(ctx, queuedRP("it-dup-b", 5200, 1, 0))
	assertInvalid(t, err, field.ErrorTypeDuplicate, "spec.priorityLevel",
		`Duplicate value: 5200: already used by RequestPriority "it-dup-a"; levels are unique cluster-wide`)
}

func TestImmutableLevel(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	rp := queuedRP("it-immutable", 5300, 1, 0)
	if err := s.admin.Create(ctx, rp); err != nil {
		t.Fatal(err)
	}
	rp.Spec.PriorityLevel = 5301
	err := s.admin.Update(ctx, rp)
	assertInvalid(t, err, field.ErrorTypeInvalid, "spec.priorityLevel",
		"delete the RequestPriority and create it again with the new level")
}

func TestHandSizeOverLimitRejectedWithFigure(t *testing.T) {
	s := envSuite(t)
	err := s.admin.Create(context.Background(), queuedRP("it-hand", 5400, 64, 12))
	assertInvalid(t, err, field.ErrorTypeInvalid, "spec.handSize",
		"Invalid value: 12: ff(queuesPerWidth=64, handSize=12) = 1573144097507348889600 >= 2^60 = 1152921504606846976; "+
			"lower handSize (at most 10 with queuesPerWidth 64) or queuesPerWidth")
}

func TestRegexWithoutCapturingGroupRejected(t *testing.T) {
	s := envSuite(t)
	fs := flowSchema("it-regex", "it-valid", &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceUser,
		Transformation: &v1alpha1.Transformation{Regex: "tenant-[a-z]+-.*"}})
	err := s.admin.Create(context.Background(), fs)
	assertInvalid(t, err, field.ErrorTypeInvalid, "spec.flowDistinguisher.transformation.regex",
		`Invalid value: "tenant-[a-z]+-.*": has no capturing group`)
}

func TestDistinguisherConflictRejectedOnBothSides(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	rp := queuedRP("it-reverse", 5500, 16, 4)
	if err := s.admin.Create(ctx, rp); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, rp)
	fs := flowSchema("it-reverse", "it-reverse", &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceUser})
	if err := s.admin.Create(ctx, fs); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, fs)
	rp.Spec.QueuesPerWidth, rp.Spec.HandSize = ptr.To[int32](1), nil
	assertInvalid(t, s.admin.Update(ctx, rp), field.ErrorTypeForbidden, "spec.queuesPerWidth",
		`FlowSchema "it-reverse" refer(s) to this RequestPriority with a flowDistinguisher`)

	single := queuedRP("it-single", 5600, 1, 0)
	if err := s.admin.Create(ctx, single); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, single)
	fs.Spec.RequestPriority.Name = "it-single"
	assertInvalid(t, s.admin.Update(ctx, fs), field.ErrorTypeForbidden, "spec.flowDistinguisher",
		`RequestPriority "it-single" has queuesPerWidth 1`)
}

// TestExemptLevelAuthorization impersonates a user whom RBAC allows to write APF objects but
// who is not in system:masters: only the webhook stops them at the exempt level.
func TestExemptLevelAuthorization(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	s.grantAPFWriter(t, "dev")
	dev, _ := s.clientAs(t, "dev", []string{"developers"})

	err := dev.Create(ctx, &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "it-dev-top"}})
	assertInvalid(t, err, field.ErrorTypeForbidden, "spec.priorityLevel",
		`user "dev" may not create or update a RequestPriority at the exempt level 0: only members of group`)
	err = dev.Create(ctx, flowSchema("it-dev-backstop", "system-top", nil))
	assertInvalid(t, err, field.ErrorTypeForbidden, "spec.requestPriority.name",
		`user "dev" may not create or update a FlowSchema that refers to RequestPriority "system-top" at the exempt level 0`)

	mine := queuedRP("it-dev-own", 5700, 8, 2)
	if err := dev.Create(ctx, mine); err != nil {
		t.Fatalf("RBAC and the webhook must let dev create a non-exempt level: %v", err)
	}

	top := &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "it-top"}}
	if err := s.admin.Create(ctx, top); err != nil {
		t.Fatalf("system:masters must be allowed the exempt level: %v", err)
	}
	s.waitCached(t, top)
	err = dev.Create(ctx, flowSchema("it-dev-exempt", "it-top", nil))
	assertInvalid(t, err, field.ErrorTypeForbidden, "spec.requestPriority.name",
		`refers to RequestPriority "it-top" at the exempt level 0`)
	top.Labels = map[string]string{"owner": "dev"}
	assertInvalid(t, dev.Update(ctx, top), field.ErrorTypeForbidden, "spec.priorityLevel", `user "dev" may not`)
	if err := s.admin.Create(ctx, flowSchema("it-admin-exempt", "it-top", nil)); err != nil {
		t.Fatalf("system:masters must be allowed a FlowSchema at the exempt level: %v", err)
	}
}

// queuedRP returns a RequestPriority; handSize 0 means none.
func queuedRP(name string, level, queues, hand int32) *v1alpha1.RequestPriority {
	rp := &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.RequestPrioritySpec{
		PriorityLevel: level, AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To(queues),
		QueueLengthLimit: ptr.To[int32](50),
	}}
	if hand > 0 {
		rp.Spec.HandSize = ptr.To(hand)
	}
	return rp
}

func flowSchema(name, rp string, d *v1alpha1.FlowDistinguisher) *v1alpha1.FlowSchema {
	return &v1alpha1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority:  700000,
		RequestPriority:   v1alpha1.RequestPriorityReference{Name: rp},
		FlowDistinguisher: d,
		Match: []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{
			{PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldUser, Pattern: "tenant-.*"}}}}},
	}}
}

// assertInvalid checks that err is the API server's Invalid error carrying the webhook's cause
// on path, of the given type, whose message contains msg.
func assertInvalid(t *testing.T, err error, typ field.ErrorType, path, msg string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error = %v, want Invalid", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if status.Details != nil {
		for _, c := range status.Details.Causes {
			if c.Field == path && c.Type == metav1.CauseType(typ) && strings.Contains(c.Message, msg) {
				return
			}
		}
	}
	t.Fatalf("error = %v\nwant a cause on %s of type %s containing %q", err, path, typ, msg)
}

// assertWarnings checks that each warning starts with the wanted prefix, in order.
func assertWarnings(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("warnings = %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}

// warningRecorder collects the warnings the API server returns.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

// take returns and forgets the recorded warnings.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	got := w.warnings
	w.warnings = nil
	return got
}

// clientAs returns a client that records warnings, impersonating user (with groups) unless
// user is empty (then it is the admin).
func (s *suite) clientAs(t *testing.T, user string, groups []string) (client.Client, *warningRecorder) {
	t.Helper()
	cfg := rest.CopyConfig(s.cfg)
	w := &warningRecorder{}
	cfg.WarningHandler = w
	if user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	}
	c, err := client.New(cfg, client.Options{Scheme: s.scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}

// grantAPFWriter lets user write RequestPriority and FlowSchema objects through RBAC.
func (s *suite) grantAPFWriter(t *testing.T, user string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "apf-writer-" + user}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"requestpriorities", "flowschemas"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "apf-writer-" + user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	for _, obj := range []client.Object{role, binding} {
		if err := s.admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

// waitCached waits until the manager's cache (which the webhooks read) holds obj at its
// current resourceVersion.
func (s *suite) waitCached(t *testing.T, obj client.Object) {
	t.Helper()
	got := obj.DeepCopyObject().(client.Object)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.cache.Get(context.Background(), client.ObjectKeyFromObject(obj), got)
		if err == nil && got.GetResourceVersion() == obj.GetResourceVersion() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache never saw %s at resourceVersion %s: %v", obj.GetName(), obj.GetResourceVersion(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
