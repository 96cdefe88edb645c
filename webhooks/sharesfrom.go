package webhooks

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// DonorReader reads what the spec.sharesFrom rule (validation.SharesFrom) needs.
type DonorReader interface {
	// Donor describes the native level named donor, and returns the shares the
	// RequestPriorities other than the one named except carve from it.
	Donor(ctx context.Context, donor, except string) (validation.Donor, int64, error)
}

// cacheDonors is a DonorReader over the manager's cache. It lists the RequestPriorities only
// for a RequestPriority that carves (spec.sharesFrom), which every other admission skips.
type cacheDonors struct {
	reader client.Reader
}

var _ DonorReader = cacheDonors{}

// Donor implements DonorReader.
func (c cacheDonors) Donor(ctx context.Context, donor, except string) (validation.Donor, int64, error) {
	var plc flowcontrolv1.PriorityLevelConfiguration
	d := validation.Donor{Name: donor}
	switch err := c.reader.Get(ctx, client.ObjectKey{Name: donor}, &plc); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return d, 0, err
	default:
		d.Exists, d.Owned, d.Shares = true, native.Owned(&plc), native.OriginalShares(&plc)
		d.Exempt = plc.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt || plc.Spec.Limited == nil
	}
	var rps v1alpha1.RequestPriorityList
	if err := c.reader.List(ctx, &rps); err != nil {
		return d, 0, err
	}
	var carved int64
	for i := range rps.Items {
		if rp := &rps.Items[i]; rp.Name != except && rp.Spec.SharesFrom == donor {
			carved += validation.CarvedShares(rp)
		}
	}
	return d, carved, nil
}

// sharesFromErrors checks a create (old nil) or update of a carving RequestPriority against
// its donor; an update that carves no more than before is always admitted, as lowering
// shares is how a refused level is fixed.
func sharesFromErrors(ctx context.Context, donors DonorReader, old, obj *v1alpha1.RequestPriority) (field.ErrorList, error) {
	carved := validation.CarvedShares(obj)
	if donors == nil || carved == 0 || carved <= validation.CarvedShares(old) {
		return nil, nil
	}
	donor, others, err := donors.Donor(ctx, obj.Spec.SharesFrom, obj.Name)
	if err != nil {
		return nil, err
	}
	return validation.SharesFrom(carved, donor, others), nil
}
