package autopilot_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// tenantLendablePercent is what the tenants lend in the borrowing evaluation (kube-apiserver's
// workload-high and global-default lend 50%); they borrow up to the native projection's default
// borrowing limit (their spec leaves it absent).
const tenantLendablePercent = 50

// TestEvalAutopilotAgainstBorrowing is issue #34's live evaluation (docs/autopilot-live.md): the
// schedule played with the tenants lending 50% and borrowing without limit on their
// configured shares (kube-apiserver's own borrowing, what a user would turn on first), then
// again with the autopilot on top. It records the figures and checks only that the runs are
// sound (classification, seats outside the pool, the pool's sum), not which run wins: it is
// an evaluation, which `make eval` runs after TestEvalAutopilotAgainstStatic (they share the
// cluster and its users); alone:
//
//	go test -count=1 -v -run TestEvalAutopilotAgainstBorrowing ./test/autopilot/
func TestEvalAutopilotAgainstBorrowing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	k8s, cs := clients(t)
	applyTenants(ctx, t)
	enableBorrowing(ctx, t, cs, k8s)
	borrowing, auto, taken, errs := playThenAutopilot(ctx, t, k8s, cs, "static + borrowing", "autopilot + borrowing")
	b, a := poolRejected(borrowing), poolRejected(auto)
	t.Logf("pool rejections: static + borrowing %.0f, autopilot + borrowing %.0f", b, a)
	checkClassification(ctx, t, cs, borrowing, auto)
	checkSamples(t, taken, errs)
	checkStatus(ctx, t, k8s)
}

// enableBorrowing sets every tenant's lendablePercent to tenantLendablePercent and removes its
// borrowing limit (a merge patch, as a Git change would), and waits until the native levels
// have them: the lendable percent, and the native projection's default borrowing limit (or
// less, where the native borrowing budget requires: docs/enforcement.md, "Borrowing").
func enableBorrowing(ctx context.Context, t *testing.T, cs kubernetes.Interface, k8s client.Client) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"lendablePercent":%d,"borrowingLimitPercent":null}}`, tenantLendablePercent)
	for _, tn := range tenants {
		rp := &flowv1.RequestPriority{}
		rp.Name = tn.name
		if err := k8s.Patch(ctx, rp, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatalf("turning borrowing on for %s: %v", tn.name, err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, tn := range tenants {
		for {
			plc, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, nativeLevel(tn.name), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if l := plc.Spec.Limited; l != nil && l.LendablePercent != nil && *l.LendablePercent == tenantLendablePercent &&
				ptr.Deref(l.BorrowingLimitPercent, 1000) <= budget.DefaultBorrowingLimitPercent {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's native level did not get lendablePercent %d with the default borrowing limit: %+v", tn.name, tenantLendablePercent, plc.Spec.Limited)
			}
			time.Sleep(time.Second)
		}
	}
}
