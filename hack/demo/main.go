// Command demo runs the apf-operator journey on a local control plane in about a minute, with
// no existing cluster: it starts kube-apiserver and etcd, runs the operator binary, shows the
// defaults it creates, applies the samples, shows a bad manifest rejected with its fix, drives
// an overload that kube-apiserver's own flow control handles with the configuration the operator
// projected onto it, and shuts everything down (also on Ctrl-C).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

func main() {
	assets := flag.String("assets", "", "directory of kube-apiserver, etcd and kubectl (default: bin/k8s/...)")
	operator := flag.String("operator", "bin/apf-operator", "path of the apf-operator binary")
	flag.Parse()
	if *assets != "" {
		os.Setenv("KUBEBUILDER_ASSETS", *assets)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *operator)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "demo interrupted; everything it started has stopped")
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func step(format string, args ...any) {
	fmt.Printf("\n\033[1m== %s\033[0m\n", fmt.Sprintf(format, args...))
}

func run(ctx context.Context, operatorBinary string) (err error) {
	step("1/6 Starting a local control plane (kube-apiserver and etcd built from their Go modules)")
	cluster, err := harness.StartWith(demoAPIServerFlags)
	if err != nil {
		return err
	}
	defer func() {
		step("Shutting down the control plane")
		err = errors.Join(err, cluster.Stop())
		if err == nil {
			fmt.Println("kube-apiserver and etcd stopped")
		}
	}()
	fmt.Println("API server:", cluster.Config.Host)

	step("2/6 Starting apf-operator as its own process (webhooks served over TLS)")
	op, err := cluster.StartOperator(operatorBinary, cluster.OperatorArgs("0")...)
	if err != nil {
		return err
	}
	defer func() {
		step("Stopping apf-operator")
		if stopErr := op.Stop(20 * time.Second); stopErr != nil {
			err = errors.Join(err, stopErr)
			fmt.Println(op.ReadLog())
		} else {
			fmt.Println("stopped cleanly")
		}
	}()

	k8s, err := cluster.Client()
	if err != nil {
		return err
	}
	step("3/6 The operator creates the default configuration, the proposal's five and five, bound")
	fmt.Println("With enforcement native the non-top defaults are bound to the kube-apiserver levels that serve")
	fmt.Println("their classes, and the FlowSchemas that would move traffic are withheld (ShadowedByNative):")
	fmt.Println("every request keeps kube-apiserver's own levels and seats (docs/enforcement.md):")
	if err := waitReady(ctx, k8s, op, 5, 5); err != nil {
		return err
	}
	if err := kubectl(ctx, cluster, "get", "apf"); err != nil {
		return err
	}
	fmt.Println("\nProjected onto kube-apiserver's own flow control (flowcontrol.apiserver.k8s.io/v1):")
	if err := kubectl(ctx, cluster, "get", "flowschemas.flowcontrol.apiserver.k8s.io", "-l",
		"app.kubernetes.io/managed-by=apf-operator", "--sort-by=.spec.matchingPrecedence"); err != nil {
		return err
	}

	step("4/6 kubectl apply --server-side -f config/samples (a tenant level and its FlowSchema)")
	if err := kubectl(ctx, cluster, "apply", "--server-side", "-k", filepath.Join(envtestutil.RepoRoot(), "config", "samples")); err != nil {
		return err
	}
	if err := waitReady(ctx, k8s, op, 6, 6); err != nil {
		return err
	}
	if err := kubectl(ctx, cluster, "get", "requestpriorities.flowcontrol.apf-operator.io"); err != nil {
		return err
	}

	step("5/6 A bad manifest is rejected at admission, with the field and the fix")
	if err := showRejection(ctx, cluster); err != nil {
		return err
	}

	step("6/6 Fair queuing under overload, enforced by kube-apiserver itself")
	return overload(ctx, cluster, k8s)
}

const badManifest = `apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata:
  name: too-big-a-hand
spec:
  priorityLevel: 7000
  assuredConcurrencyShares: 10
  queuesPerWidth: 64
  handSize: 12
  queueLengthLimit: 50
`

func showRejection(ctx context.Context, cluster *harness.Cluster) error {
	fmt.Print(indent(badManifest))
	_, stderr, err := cluster.KubectlRun(ctx, strings.NewReader(badManifest), "apply", "--server-side", "-f", "-")
	if err == nil {
		return errors.New("the bad manifest was accepted")
	}
	fmt.Println("kubectl says:")
	fmt.Print(indent(stderr))
	if !strings.Contains(stderr, "spec.handSize") {
		return fmt.Errorf("the rejection does not name spec.handSize: %s", stderr)
	}
	return nil
}

func kubectl(ctx context.Context, cluster *harness.Cluster, args ...string) error {
	fmt.Println("$ kubectl " + strings.Join(args, " "))
	stdout, stderr, err := cluster.KubectlRun(ctx, nil, args...)
	fmt.Print(stdout)
	if err != nil {
		return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr)
	}
	return nil
}

// waitReady waits until at least the given numbers of RequestPriority and FlowSchema objects
// exist and all report Ready=True and Projected=True.
func waitReady(ctx context.Context, k8s client.Client, op *harness.Operator, rps, fss int) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		ok, err := allReady(ctx, k8s, rps, fss)
		if err != nil || ok {
			return err
		}
		if exited, exitErr := op.Exited(); exited {
			return fmt.Errorf("the operator exited (%v):\n%s", exitErr, op.ReadLog())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("objects not Ready after 90s; operator log:\n%s", op.ReadLog())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func allReady(ctx context.Context, k8s client.Client, wantRPs, wantFSs int) (bool, error) {
	objs, err := harness.Objects(ctx, k8s)
	if err != nil {
		return false, err
	}
	rps, fss := 0, 0
	for key, o := range objs {
		projected := meta.FindStatusCondition(o.Conditions, flowv1.ConditionProjected)
		settled := projected != nil && (projected.Status == metav1.ConditionTrue ||
			projected.Reason == flowv1.ReasonShadowedByNative) // a default withheld on purpose
		if !meta.IsStatusConditionTrue(o.Conditions, flowv1.ConditionReady) || !settled {
			return false, nil
		}
		if strings.HasPrefix(key, "rp/") {
			rps++
		} else {
			fss++
		}
	}
	return rps >= wantRPs && fss >= wantFSs, nil
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line != "" {
			b.WriteString("    " + line)
		}
	}
	return b.String()
}
