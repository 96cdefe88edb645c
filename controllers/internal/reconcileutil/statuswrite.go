package reconcileutil

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ConflictRetry is how soon a status write that lost to a newer object version is retried,
// once the cache has caught up.
const ConflictRetry = 200 * time.Millisecond

// StatusWriteResult turns a failed status write into a result: a conflict means the cache was
// behind and is retried after ConflictRetry; a vanished object needs nothing.
func StatusWriteResult(err error) (ctrl.Result, error) {
	switch {
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: ConflictRetry}, nil
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	default:
		return ctrl.Result{}, err
	}
}
