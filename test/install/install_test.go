package install

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

const (
	namespace  = "apf-operator-system"
	deployment = "apf-operator"
	pruneJob   = "apf-operator-prune-native"
)

const rolloutStatus = "kubectl -n apf-operator-system rollout status deployment/apf-operator"

// rolloutSkipped stands for `rollout status`: no pod runs, but the Deployment pulls the
// image `make image` writes, and by the time the pods would be ready kube-apiserver serves the
// CRDs in discovery (their category apf), which the next command, kubectl get apf, needs.
var rolloutSkipped = step{
	skip: "waits for the operator's pods to become ready; no kubelet runs pods in envtest",
	check: func(t *testing.T, ctx context.Context, c *cluster) {
		checkDeploymentImage(t, ctx, c)
		harness.Eventually(t, time.Minute, "discovery to serve both kinds in category apf", func(context.Context) error {
			return servesCategory(c, "apf", "flowcontrol.apf-operator.io", "requestpriorities", "flowschemas")
		})
	},
}

// servesCategory returns nil once discovery lists every resource of the group in the category.
func servesCategory(c *cluster, category, group string, resources ...string) error {
	lists, err := c.disc.ServerPreferredResources()
	if err != nil {
		return err
	}
	var found []string
	for _, l := range lists {
		if !strings.HasPrefix(l.GroupVersion, group+"/") {
			continue
		}
		for _, r := range l.APIResources {
			if slices.Contains(r.Categories, category) {
				found = append(found, r.Name)
			}
		}
	}
	for _, r := range resources {
		if !slices.Contains(found, r) {
			return fmt.Errorf("discovery lists %v of %s in category %s; want %v", found, group, category, resources)
		}
	}
	return nil
}

// crds are the chart's CRDs; the uninstall instructions must remove them all.
var crds = []string{"requestpriorities.flowcontrol.apf-operator.io", "flowschemas.flowcontrol.apf-operator.io",
	"eventratelimits.flowcontrol.apf-operator.io"}

// TestInstallDoc runs every command of docs/install.md in order on a fresh control plane: the
// Helm install, the exempt-level upgrade, the role bindings, the uninstall (with its
// post-delete hook), then the kustomize bases.
func TestInstallDoc(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	commands := shellCommands(t, "docs/install.md", "")
	// The kustomize bases are the alternative to the chart: applied after the chart's uninstall,
	// as on a cluster that never had the chart.
	var kustomize []string
	commands = slices.DeleteFunc(commands, func(cmd string) bool {
		if strings.HasPrefix(cmd, "kustomize build") {
			kustomize = append(kustomize, cmd)
			return true
		}
		return false
	})
	runDocumented(t, c, append(commands, kustomize...), map[string]step{
		"make image": {skip: "hack/image's TestMakeImage (make test) runs it twice and checks the archive and its reference"},
		"crane push bin/image/apf-operator-v0.1.0 ghcr.io/you/apf-operator:v0.1.0": {
			skip: "needs a registry to push to; hack/image's TestMakeImage runs crane's push command against an in-memory registry",
		},
		"skopeo copy --all oci-archive:bin/image/apf-operator-v0.1.0.oci.tar docker://ghcr.io/you/apf-operator:v0.1.0": {
			skip: "needs a registry to push to, and skopeo",
		},
		"kind load image-archive bin/image/apf-operator-v0.1.0.oci.tar":                   {skip: "needs a kind cluster (a Docker engine)"},
		"helm install apf-operator ./charts/apf-operator --namespace apf-operator-system": {check: checkChartInstalled},
		rolloutStatus: rolloutSkipped,
		"helm upgrade apf-operator ./charts/apf-operator -n apf-operator-system --reuse-values --set 'exempt.users={system:serviceaccount:argocd:argocd-application-controller}'": {
			check: checkArg("--exempt-users=system:serviceaccount:argocd:argocd-application-controller"),
		},
		"helm uninstall apf-operator -n apf-operator-system": {during: completePruneJob, check: checkUninstalled},
		"kubectl delete crd requestpriorities.flowcontrol.apf-operator.io flowschemas.flowcontrol.apf-operator.io eventratelimits.flowcontrol.apf-operator.io": {
			check: checkCRDsGone,
		},
		"kubectl -n apf-operator-system logs job/apf-operator-prune-native": {
			skip: "the hook Job succeeded here, so Helm deleted it; no pod runs in envtest to have a log",
		},
		"kubectl delete prioritylevelconfigurations.flowcontrol.apiserver.k8s.io,flowschemas.flowcontrol.apiserver.k8s.io -l app.kubernetes.io/managed-by=apf-operator": {
			check: checkNoOwnedNatives,
		},
		"kustomize build config/default | kubectl apply --server-side -f -": {check: checkKustomizeApplied},
		"kustomize build config/certmanager | kubectl apply --server-side -f -": {
			skip: "needs cert-manager installed (its Issuer and Certificate CRDs and its webhook); config/default was applied above",
		},
	})
}

// TestReadmeInstall runs the README's "Install in a cluster" commands on a fresh control plane.
func TestReadmeInstall(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	runDocumented(t, c, shellCommands(t, "README.md", "Install in a cluster"), map[string]step{
		"helm install apf-operator charts/apf-operator --namespace apf-operator-system --create-namespace": {check: checkChartInstalled},
		rolloutStatus: rolloutSkipped,
	})
}

// checkChartInstalled: the chart's objects exist, the Deployment pulls the image `make image`
// writes, and the CRDs are established (as they are by the time a reader whose pods started
// runs the next command).
func checkChartInstalled(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	for _, o := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: deployment, Namespace: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "apf-operator", Namespace: namespace}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "apf-operator-webhook", Namespace: namespace}},
		named("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "apf-operator-validating-webhook"),
		named("rbac.authorization.k8s.io/v1", "ClusterRole", "apf-operator-manager"),
		named("rbac.authorization.k8s.io/v1", "ClusterRole", "apf-operator-viewer"),
	} {
		if err := c.k8s.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("after helm install: %T %s: %v", o, o.GetName(), err)
		}
	}
	checkDeploymentImage(t, ctx, c)
	for _, name := range crds {
		harness.Eventually(t, time.Minute, "CRD "+name+" to be established", func(ctx context.Context) error {
			crd := named("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
			if err := c.k8s.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("not established: %v", conds)
		})
	}
}

// checkDeploymentImage: the Deployment pulls the chart's default image, the reference `make
// image` writes into its archive's index.json.
func checkDeploymentImage(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	var d appsv1.Deployment
	if err := c.k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: deployment}, &d); err != nil {
		t.Fatalf("Deployment %s/%s: %v", namespace, deployment, err)
	}
	if got, want := d.Spec.Template.Spec.Containers[0].Image, defaultImage(t); got != want {
		t.Errorf("the Deployment pulls %q; `make image` writes %q", got, want)
	}
}

func checkArg(want string) func(t *testing.T, ctx context.Context, c *cluster) {
	return func(t *testing.T, ctx context.Context, c *cluster) {
		t.Helper()
		var d appsv1.Deployment
		if err := c.k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: deployment}, &d); err != nil {
			t.Fatal(err)
		}
		if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, want) {
			t.Errorf("after helm upgrade the operator's arguments are %q; want %s among them", args, want)
		}
	}
}

// completePruneJob plays the Job controller and kubelet for the post-delete hook, which helm
// uninstall waits for: it checks the Job runs `apf-operator prune-native` from the chart's
// image, then marks it complete.
func completePruneJob(t *testing.T, ctx context.Context, c *cluster) {
	var job batchv1.Job
	harness.Eventually(t, 2*time.Minute, "the post-delete hook Job", func(ctx context.Context) error {
		return c.k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: pruneJob}, &job)
	})
	if t.Failed() {
		return
	}
	container := job.Spec.Template.Spec.Containers[0]
	if container.Image != defaultImage(t) || !slices.Equal(container.Args, []string{"prune-native"}) {
		t.Errorf("the hook Job runs %s %q; want %s prune-native", container.Image, container.Args, defaultImage(t))
	}
	now := metav1.Now()
	job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}}
	if err := c.k8s.Status().Update(ctx, &job); err != nil {
		t.Errorf("marking the hook Job complete: %v", err)
	}
}

// checkUninstalled: the operator and its webhook are gone; the CRDs stay (crds.keep).
func checkUninstalled(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	for _, o := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: deployment, Namespace: namespace}},
		named("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "apf-operator-validating-webhook"),
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: pruneJob, Namespace: namespace}},
	} {
		if err := c.k8s.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
			t.Errorf("after helm uninstall, %T %s: %v; want it deleted", o, o.GetName(), err)
		}
	}
	for _, name := range crds {
		if err := c.k8s.Get(ctx, client.ObjectKey{Name: name}, named("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)); err != nil {
			t.Errorf("after helm uninstall, CRD %s: %v; want it kept (crds.keep)", name, err)
		}
	}
}

func checkCRDsGone(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	for _, name := range crds {
		harness.Eventually(t, time.Minute, "CRD "+name+" to be deleted", func(ctx context.Context) error {
			err := c.k8s.Get(ctx, client.ObjectKey{Name: name}, named("apiextensions.k8s.io/v1", "CustomResourceDefinition", name))
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
	}
}

// checkKustomizeApplied: config/default's Deployment exists and pulls the same image.
func checkKustomizeApplied(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	var list appsv1.DeploymentList
	if err := c.k8s.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("config/default created %d Deployments in %s; want 1", len(list.Items), namespace)
	}
	if got := list.Items[0].Spec.Template.Spec.Containers[0].Image; got != defaultImage(t) {
		t.Errorf("config/default's Deployment pulls %q; want %q", got, defaultImage(t))
	}
}

// named returns an empty object of the given kind and name, for Get.
func named(apiVersion, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	u.SetName(name)
	return u
}

// checkNoOwnedNatives: after the by-hand command, no native object carries the operator's label.
func checkNoOwnedNatives(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	owned := client.MatchingLabels{"app.kubernetes.io/managed-by": "apf-operator"}
	var fss flowcontrolv1.FlowSchemaList
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	for _, l := range []client.ObjectList{&fss, &plcs} {
		if err := c.k8s.List(ctx, l, owned); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fss.Items) + len(plcs.Items); n > 0 {
		t.Errorf("%d native objects with the operator's label left", n)
	}
}
