package prune

import (
	"context"
	"fmt"
	"io"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/internal/native"
)

// restoreDonors gives every level the operator carved shares from (spec.sharesFrom) back the
// shares and apf.kubernetes.io/autoupdate-spec annotation recorded on it before the takeover
// (native.RestoreDonor), and writes one line per level to out, as dryRun says.
func restoreDonors(ctx context.Context, c client.Client, dryRun DryRun, out io.Writer) error {
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := c.List(ctx, &plcs); err != nil {
		return fmt.Errorf("listing native PriorityLevelConfigurations: %w", err)
	}
	for i := range plcs.Items {
		live := &plcs.Items[i]
		if native.Owned(live) || native.RestoreDonor(live) == nil {
			continue
		}
		if dryRun == DryRunClient {
			fmt.Fprintf(out, "would restore PriorityLevelConfiguration %s\n", live.Name)
			continue
		}
		want, err := restoreOne(ctx, c, live, dryRun)
		if err != nil {
			return fmt.Errorf("restoring PriorityLevelConfiguration %s: %w", live.Name, err)
		}
		fmt.Fprintf(out, "restored PriorityLevelConfiguration %s (nominalConcurrencyShares %d, %s %q)%s\n", want.Name,
			*want.Spec.Limited.NominalConcurrencyShares, flowcontrolv1.AutoUpdateAnnotationKey,
			want.Annotations[flowcontrolv1.AutoUpdateAnnotationKey], serverDryRunNote(dryRun))
	}
	return nil
}

// restoreOne patches one donor back, reading it again after a conflict.
func restoreOne(ctx context.Context, c client.Client, live *flowcontrolv1.PriorityLevelConfiguration,
	dryRun DryRun) (*flowcontrolv1.PriorityLevelConfiguration, error) {
	var opts []client.PatchOption
	if dryRun == DryRunServer {
		opts = append(opts, client.DryRunAll)
	}
	var want *flowcontrolv1.PriorityLevelConfiguration
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
			return err
		}
		if want = native.RestoreDonor(live); want == nil || want.Spec.Limited == nil {
			return apierrors.NewNotFound(flowcontrolv1.Resource("prioritylevelconfigurations"), live.Name)
		}
		return c.Patch(ctx, want, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{}), opts...)
	})
	return want, err
}

func serverDryRunNote(dryRun DryRun) string {
	if dryRun == DryRunServer {
		return " (server dry run)"
	}
	return ""
}
