package controllers

import (
	"context"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/internal/native"
)

// patchDonor writes want, the donor level live changed by the operator (taken over and
// lowered, or restored: native.TakeOver, native.RestoreDonor), as a merge patch that holds
// only if live is still the current version; a conflict is left to the event it brings.
func patchDonor(ctx context.Context, c client.Client, live, want *flowcontrolv1.PriorityLevelConfiguration) error {
	obj := want.DeepCopy()
	err := c.Patch(ctx, obj, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil:
		logf.FromContext(ctx).Info("Wrote donor level", "name", want.Name, "donor", native.IsDonor(want),
			"nominalConcurrencyShares", *want.Spec.Limited.NominalConcurrencyShares)
		return nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil // gone, or changed since it was read: its event brings the next pass
	default:
		return fmt.Errorf("writing donor PriorityLevelConfiguration %s: %w", want.Name, err)
	}
}

// restoreDonors gives every donor among plcs back the shares and autoupdate-spec annotation
// it had before the takeover (enforcement none: nothing is carved any more).
func restoreDonors(ctx context.Context, c client.Client, plcs []flowcontrolv1.PriorityLevelConfiguration) []error {
	var errs []error
	for i := range plcs {
		if want := native.RestoreDonor(&plcs[i]); want != nil && !native.Owned(&plcs[i]) {
			errs = append(errs, patchDonor(ctx, c, &plcs[i], want))
		}
	}
	return errs
}
