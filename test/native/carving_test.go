package native_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/cli/prune"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/test/harness"
)

// carvingDonor is the stock level the tenant takes its shares from.
const carvingDonor = "workload-low"

// TestCarvingShrinksOnlyTheDonor: a tenant level of 40 shares carved from kube-apiserver's
// workload-low (spec.sharesFrom) is projected, workload-low is taken over (autoupdate-spec
// "false") and lowered to 60, the sum of every level's nominalConcurrencyShares is unchanged,
// and so is every other level's apiserver_flowcontrol_nominal_limit_seats. Deleting the
// tenant gives workload-low back its 100 shares and its "true"; so does uninstalling (the
// operator stopped, then prune-native, the chart's post-delete hook) after it carved again.
func TestCarvingShrinksOnlyTheDonor(t *testing.T) {
	resetCluster(t)
	createDefaults(t, false)
	t.Cleanup(func() { restoreDonorFor(t) }) // only acts when a check failed half-way
	stock := nativePLC(t, carvingDonor)
	if native.IsDonor(stock) || stock.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" ||
		*stock.Spec.Limited.NominalConcurrencyShares != 100 {
		t.Fatalf("workload-low is not kube-apiserver's stock level: %v %v", stock.Annotations, *stock.Spec.Limited.NominalConcurrencyShares)
	}
	tenant := rp("carve-tenant", 7000, 40, 16, 4, 50)
	tenant.Spec.SharesFrom = carvingDonor
	t.Run("delete", func(t *testing.T) {
		startOperator(t, operatorConfig{seatsPeriod: time.Second})
		waitSettled(t)
		sum, seats := sharesSum(t), seatsSettledTo(t, nil, "")
		if err := k8s.Create(context.Background(), tenant.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		level := waitProjectedRP(t, tenant.Name)
		waitDonor(t, 60, "false")
		if got := sharesSum(t); got != sum {
			t.Errorf("sum of nominalConcurrencyShares %d with the tenant, %d before: not zero-sum", got, sum)
		}
		after := seatsSettledTo(t, seats, level)
		if after[carvingDonor]+after[level] > seats[carvingDonor]+1 {
			t.Errorf("workload-low %v + tenant %v seats, more than workload-low's %v before (+1 for rounding)",
				after[carvingDonor], after[level], seats[carvingDonor])
		}
		t.Logf("nominal seats: workload-low %v -> %v, %s %v; sum of shares %d", seats[carvingDonor],
			after[carvingDonor], level, after[level], sum)
		deleteTenant(t, tenant.Name)
		waitDonor(t, 100, "true")
		harness.Eventually(t, waitTimeout, "the tenant's level to be deleted", func() error {
			if got := sharesSum(t); got != sum {
				return fmt.Errorf("sum of nominalConcurrencyShares %d after the tenant's deletion, want %d", got, sum)
			}
			return nil
		})
		seatsSettledTo(t, seats, "")
		// Carve again; the uninstall below must restore it.
		if err := k8s.Create(context.Background(), tenant.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		waitProjectedRP(t, tenant.Name)
		waitDonor(t, 60, "false")
	}) // the operator stops here, as `helm uninstall` deletes its Deployment
	t.Run("uninstall", func(t *testing.T) {
		if d := nativePLC(t, carvingDonor); *d.Spec.Limited.NominalConcurrencyShares != 60 {
			t.Fatalf("workload-low holds %d shares once the operator stopped, want the carved 60", *d.Spec.Limited.NominalConcurrencyShares)
		}
		var out bytes.Buffer
		if err := prune.Prune(context.Background(), k8s, prune.DryRunNone, &out); err != nil {
			t.Fatalf("prune-native: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), `restored PriorityLevelConfiguration workload-low (nominalConcurrencyShares 100, apf.kubernetes.io/autoupdate-spec "true")`) {
			t.Errorf("prune-native did not report the restore:\n%s", out.String())
		}
		waitDonor(t, 100, "true")
		if got, want := sharesSum(t), stockSum(); got != want {
			t.Errorf("after uninstall the levels hold %d shares, kube-apiserver's bootstrap set %d", got, want)
		}
	})
	deleteTenant(t, tenant.Name)
}

// waitDonor waits until workload-low holds shares with autoupdate-spec auto; "true" means
// restored: no record of the operator's left either.
func waitDonor(t testing.TB, shares int32, auto string) {
	t.Helper()
	harness.Eventually(t, waitTimeout, "workload-low's shares and autoupdate-spec", func() error {
		d := nativePLC(t, carvingDonor)
		got := *d.Spec.Limited.NominalConcurrencyShares
		if got != shares || d.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != auto {
			return fmt.Errorf("workload-low: %d shares, annotations %v; want %d and autoupdate-spec %q", got, d.Annotations, shares, auto)
		}
		if restored := auto == "true"; restored == native.IsDonor(d) {
			return fmt.Errorf("workload-low: records %v while autoupdate-spec is %q", d.Annotations, auto)
		}
		return nil
	})
}

// sharesSum is the sum of every native level's nominalConcurrencyShares.
func sharesSum(t testing.TB) int32 {
	t.Helper()
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	list(t, &plcs)
	var sum int32
	for i := range plcs.Items {
		if l := plcs.Items[i].Spec.Limited; l != nil && l.NominalConcurrencyShares != nil {
			sum += *l.NominalConcurrencyShares
		}
	}
	return sum
}

// stockSum is the bootstrap set's sum of shares, as kube-apiserver's levels hold it.
func stockSum() int32 {
	var sum int32
	for _, plc := range budget.BootstrapLevels() {
		sum += plc.Shares
	}
	return sum
}

// seatsSettledTo waits until kube-apiserver's nominal seats of every level but workload-low
// and except equal want's (want nil: until two reads agree), and returns them.
func seatsSettledTo(t testing.TB, want map[string]float64, except string) map[string]float64 {
	t.Helper()
	var got map[string]float64
	harness.Eventually(t, waitTimeout, "kube-apiserver's nominal seats", func() error {
		var err error
		if got, err = nominalSeats(); err != nil {
			return err
		}
		if want == nil {
			again, err := nominalSeats()
			if err == nil && fmt.Sprint(again) != fmt.Sprint(got) {
				err = fmt.Errorf("nominal seats still changing: %v then %v", got, again)
			}
			return err
		}
		for level, seats := range want {
			if level != carvingDonor && level != except && got[level] != seats {
				return fmt.Errorf("%s has %v nominal seats, %v before the carving", level, got[level], seats)
			}
		}
		return nil
	})
	return got
}

func deleteTenant(t testing.TB, name string) {
	t.Helper()
	obj := &flowv1.RequestPriority{}
	obj.Name = name
	if err := k8s.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

// restoreDonorFor puts workload-low back as kube-apiserver ships it if a failed check left
// it carved, so that the package's other tests see the stock level.
func restoreDonorFor(t testing.TB) {
	d := nativePLC(t, carvingDonor)
	if want := native.RestoreDonor(d); want != nil {
		if err := k8s.Update(context.Background(), want); err != nil {
			t.Errorf("restoring workload-low: %v", err)
		}
	}
}
