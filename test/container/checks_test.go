package container

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// testObject is the name of the RequestPriority and FlowSchema the test applies.
const testObject = "container-test"

func (c *cluster) client(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := flowv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	k, err := client.New(c.cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// checkDefaults: the operator created the default objects of its enforcement mode, labelled as
// its own.
func checkDefaults(t *testing.T, ctx context.Context, c *cluster, d *appsv1.Deployment) {
	t.Helper()
	enforcement, err := argValue(d.Spec.Template.Spec.Containers[0].Args, "--enforcement")
	if err != nil {
		t.Fatal(err)
	}
	set := defaults.For(enforcement)
	k := c.client(t)
	var want []client.Object
	for _, rp := range set.RequestPriorities() {
		want = append(want, &rp)
	}
	for _, fs := range set.FlowSchemas() {
		want = append(want, &fs)
	}
	if len(want) == 0 {
		t.Fatalf("defaults.For(%q) holds no objects", enforcement)
	}
	for _, obj := range want {
		kind := fmt.Sprintf("%T", obj)
		harness.Eventually(t, time.Minute, "default "+kind+" "+obj.GetName(), func() error {
			if err := k.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			if obj.GetLabels()[flowv1.LabelManagedBy] != flowv1.ManagedByValue {
				return fmt.Errorf("labels %v", obj.GetLabels())
			}
			return nil
		})
		t.Logf("default %s %s created by the container", strings.TrimPrefix(kind, "*v1alpha1."), obj.GetName())
	}
}

// checkWebhook: through the chart's Service, the webhook accepts a valid RequestPriority and
// FlowSchema and refuses a second RequestPriority at the same level (a cross-object rule only
// the webhook checks: the CRD's own rules cannot).
func checkWebhook(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	k := c.client(t)
	good := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: testObject}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: 100, AssuredConcurrencyShares: ptr.To[int32](5), QueuesPerWidth: ptr.To[int32](1), QueueLengthLimit: ptr.To[int32](50)}}
	if err := k.Create(ctx, good); err != nil {
		t.Fatalf("creating a valid RequestPriority through the webhook: %v", err)
	}
	fs := &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: testObject}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: 2000, RequestPriority: flowv1.RequestPriorityReference{Name: testObject},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{SuperSet: &flowv1.SetTest{Field: flowv1.FieldGroups, Set: []string{"container-test"}}}}}},
	}}
	if err := k.Create(ctx, fs); err != nil {
		t.Fatalf("creating a valid FlowSchema through the webhook: %v", err)
	}
	bad := good.DeepCopy()
	bad.ObjectMeta = metav1.ObjectMeta{Name: testObject + "-duplicate"}
	err := k.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "denied the request") || !strings.Contains(err.Error(), "priorityLevel") {
		t.Fatalf("creating a RequestPriority at a level already taken: %v; want the webhook's denial naming spec.priorityLevel", err)
	}
	t.Logf("a RequestPriority at a taken level, refused: %v", err)
}

// checkProjection: the native PriorityLevelConfiguration and FlowSchema of the test's objects
// are written, owned by the operator.
func checkProjection(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	k := c.client(t)
	name := native.NativeName(testObject)
	for _, obj := range []client.Object{&flowcontrolv1.PriorityLevelConfiguration{}, &flowcontrolv1.FlowSchema{}} {
		harness.Eventually(t, time.Minute, fmt.Sprintf("native %T %s", obj, name), func() error {
			if err := k.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
				return err
			}
			if !native.Owned(obj) {
				return fmt.Errorf("not owned by the operator: labels %v, annotations %v", obj.GetLabels(), obj.GetAnnotations())
			}
			return nil
		})
		t.Logf("native %T %s written (source %s)", obj, name, obj.GetAnnotations()[flowv1.AnnotationSource])
	}
}

// leaseHolder returns the Lease's holder identity ("" when released).
func leaseHolder(ctx context.Context, c *cluster, name string) (string, error) {
	l, err := c.kube.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return ptr.Deref(l.Spec.HolderIdentity, ""), nil
}

// checkLeaseHeld: the container holds the leader-election Lease under its pod identity
// (controller-runtime's identity is the hostname, the pod's name, then a unique suffix).
func checkLeaseHeld(t *testing.T, ctx context.Context, c *cluster, name string) {
	t.Helper()
	harness.Eventually(t, time.Minute, "the Lease "+name+" held by "+podName, func() error {
		holder, err := leaseHolder(ctx, c, name)
		if err == nil && !strings.HasPrefix(holder, podName+"_") {
			err = fmt.Errorf("holder %q", holder)
		}
		return err
	})
	holder, _ := leaseHolder(ctx, c, name)
	t.Logf("Lease %s/%s held by %s", namespace, name, holder)
}

// checkSIGTERM: `podman stop` with the pod's grace period sends SIGTERM; the operator exits 0
// within it (not killed) and releases the Lease (LeaderElectionReleaseOnCancel), so a standby
// replica takes over at once rather than after the lease duration.
func checkSIGTERM(t *testing.T, ctx context.Context, p *podman, c *cluster, run *Run, lease string) {
	t.Helper()
	start := time.Now()
	p.must(t, "stop", "--time", fmt.Sprint(run.StopTimeout), "apf-operator")
	took := time.Since(start)
	state := p.inspect(t, "apf-operator")
	if state.State.Running || state.State.ExitCode != 0 {
		t.Errorf("after SIGTERM: status %s, exit code %d; want exited with 0", state.State.Status, state.State.ExitCode)
	}
	if took >= time.Duration(run.StopTimeout)*time.Second {
		t.Errorf("the container took %s to stop, the whole grace period of %ds: it was killed", took, run.StopTimeout)
	}
	t.Logf("SIGTERM: exited with %d after %s (grace period %ds)", state.State.ExitCode, took.Round(10*time.Millisecond), run.StopTimeout)
	holder, err := leaseHolder(ctx, c, lease)
	if err != nil || holder != "" {
		t.Errorf("after SIGTERM the Lease's holder is %q (%v); want it released", holder, err)
	}
}

// logCreated logs what the container created or changed in the cluster: the objects labelled
// as the operator's, the webhook certificate, and the caBundle it injected.
func logCreated(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	k := c.client(t)
	owned := client.MatchingLabels{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	lists := []client.ObjectList{&flowv1.RequestPriorityList{}, &flowv1.FlowSchemaList{},
		&flowcontrolv1.PriorityLevelConfigurationList{}, &flowcontrolv1.FlowSchemaList{}}
	for _, l := range lists {
		if err := k.List(ctx, l, owned); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range listItems(t, l) {
			name := o.GetName()
			if source := o.GetAnnotations()[flowv1.AnnotationSource]; source != "" {
				name += " (from " + source + ")"
			}
			names = append(names, name)
		}
		t.Logf("%T labelled %s=%s: %s", l, flowv1.LabelManagedBy, flowv1.ManagedByValue, strings.Join(names, ", "))
	}
	secret, err := c.kube.CoreV1().Secrets(namespace).Get(ctx, release+"-webhook-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for key := range secret.Data {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	t.Logf("Secret %s/%s written by the certificate rotation: keys %v", namespace, secret.Name, keys)
	vwc, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, release+"-validating-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range vwc.Webhooks {
		if len(w.ClientConfig.CABundle) == 0 {
			t.Errorf("webhook %s has no caBundle", w.Name)
		}
	}
	t.Logf("ValidatingWebhookConfiguration %s: caBundle injected into its %d webhooks", vwc.Name, len(vwc.Webhooks))
}

func listItems(t *testing.T, l client.ObjectList) []client.Object {
	t.Helper()
	var out []client.Object
	if err := meta.EachListItem(l, func(o runtime.Object) error {
		out = append(out, o.(client.Object))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkProcess: the operator's process runs as the image's non-root user, with no effective
// capability, no-new-privileges, a read-only root filesystem and the chart's memory limit: the
// chart's security context and resources as the kernel sees them.
func checkProcess(t *testing.T, pid int, imageUser string, d *appsv1.Deployment) {
	t.Helper()
	status, err := procStatus(pid)
	if err != nil {
		t.Fatal(err)
	}
	uid, _, _ := strings.Cut(imageUser, ":")
	if ids := strings.Fields(status["Uid"]); len(ids) < 2 || ids[0] != uid || ids[1] != uid {
		t.Errorf("the process's uids (real, effective, saved, fs) are %q; want %s, the image's user", status["Uid"], uid)
	}
	if status["CapEff"] != "0000000000000000" || status["NoNewPrivs"] != "1" {
		t.Errorf("CapEff %s, NoNewPrivs %s; want no capability and no-new-privileges", status["CapEff"], status["NoNewPrivs"])
	}
	opts, err := rootMountOptions(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(opts, ","), "ro") {
		t.Errorf("the root filesystem is mounted %s; want ro", opts)
	}
	want := d.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().Value()
	limit, err := memoryLimit(pid)
	if err != nil {
		t.Fatal(err)
	}
	if limit != want {
		t.Errorf("the process's cgroup memory limit is %d bytes; the chart's limit is %d", limit, want)
	}
	t.Logf("the process: Uid %s, CapEff %s, NoNewPrivs %s, root mounted %s, memory limit %d bytes",
		status["Uid"], status["CapEff"], status["NoNewPrivs"], opts, limit)
}
