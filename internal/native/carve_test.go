package native_test

import (
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

func carving(name string, level, shares int32, donor string) flowv1.RequestPriority {
	rp := withShares(requestPriority(name, level, 1, 0), shares)
	rp.Spec.SharesFrom = donor
	return rp
}

// stockLevels is kube-apiserver's bootstrap set, as a cluster holds it (workload-low: 100
// shares, autoupdate-spec "true").
func stockLevels() []flowcontrolv1.PriorityLevelConfiguration {
	plcs := bootstrapset.PriorityLevels()
	for i := range plcs {
		plcs[i].Annotations = map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}
	}
	return plcs
}

func sumShares(plcs ...[]flowcontrolv1.PriorityLevelConfiguration) (sum int32) {
	for _, list := range plcs {
		for i := range list {
			if l := list[i].Spec.Limited; l != nil {
				sum += *l.NominalConcurrencyShares
			}
		}
	}
	return sum
}

// TestCarvingIsZeroSum: two levels carving 60 and 30 from workload-low (100) are projected
// with their shares, not charged to the budget (60 alone is over its 27), and the donor is
// taken over and lowered to 10, its originals recorded; the total of shares is unchanged.
func TestCarvingIsZeroSum(t *testing.T) {
	live := stockLevels()
	rps := []flowv1.RequestPriority{carving("tenant-a", 100, 60, "workload-low"), carving("tenant-b", 200, 30, "workload-low")}
	plan := native.Project(effective.Compute(rps, nil), native.Existing{PriorityLevels: live})
	for _, name := range []string{"tenant-a", "tenant-b"} {
		if r := plan.RequestPriorities[name]; !r.Projected || !strings.Contains(r.Message, "carved from workload-low") {
			t.Fatalf("%s not projected as carved: %s", name, r.Message)
		}
	}
	if len(plan.Donors) != 1 || plan.Donors[0].Name != "workload-low" {
		t.Fatalf("donors %v, want workload-low", plan.Donors)
	}
	donor := plan.Donors[0]
	if got := *donor.Spec.Limited.NominalConcurrencyShares; got != 10 {
		t.Errorf("donor shares %d, want 100-60-30 = 10", got)
	}
	for key, want := range map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "false",
		flowv1.AnnotationDonorShares: "100", flowv1.AnnotationDonorAutoupdate: "true"} {
		if got := donor.Annotations[key]; got != want {
			t.Errorf("donor annotation %s = %q, want %q", key, got, want)
		}
	}
	after := map[string]flowcontrolv1.PriorityLevelConfiguration{}
	for _, plc := range live {
		after[plc.Name] = plc
	}
	after[donor.Name] = donor
	var levels []flowcontrolv1.PriorityLevelConfiguration
	for _, plc := range after {
		levels = append(levels, plc)
	}
	if before, now := sumShares(live), sumShares(levels, plan.PriorityLevels); before != now {
		t.Errorf("total shares %d before carving, %d after: not zero-sum", before, now)
	}
}

// TestCarvingAgainIsStable: a plan over the donor it already lowered changes nothing (the
// arithmetic starts from the recorded original, it does not compound).
func TestCarvingAgainIsStable(t *testing.T) {
	live := stockLevels()
	rps := []flowv1.RequestPriority{carving("tenant", 100, 40, "workload-low")}
	first := native.Project(effective.Compute(rps, nil), native.Existing{PriorityLevels: live})
	for i := range live {
		if live[i].Name == "workload-low" {
			live[i] = first.Donors[0]
		}
	}
	second := native.Project(effective.Compute(rps, nil), native.Existing{PriorityLevels: live})
	if len(second.Donors) != 0 {
		t.Errorf("second plan rewrites the donor: %d shares", *second.Donors[0].Spec.Limited.NominalConcurrencyShares)
	}
	if !second.RequestPriorities["tenant"].Projected {
		t.Errorf("tenant not projected over the lowered donor: %s", second.RequestPriorities["tenant"].Message)
	}
}

// TestDonorRestoredWhenNothingIsCarved: once no RequestPriority carves from it, the plan
// gives the donor its original shares and annotation back and drops the records, whether the
// annotation was "true" or absent.
func TestDonorRestoredWhenNothingIsCarved(t *testing.T) {
	for _, original := range []map[string]string{{flowcontrolv1.AutoUpdateAnnotationKey: "true"}, nil} {
		plc := stockLevels()[0]
		for _, l := range stockLevels() {
			if l.Name == "workload-low" {
				plc = l
			}
		}
		plc.Annotations = original
		taken := native.TakeOver(&plc, 25)
		plan := native.Project(effective.Compute(nil, nil), native.Existing{PriorityLevels: []flowcontrolv1.PriorityLevelConfiguration{*taken}})
		if len(plan.Donors) != 1 {
			t.Fatalf("original %v: donors %v, want the restored workload-low", original, plan.Donors)
		}
		got := plan.Donors[0]
		if *got.Spec.Limited.NominalConcurrencyShares != 100 {
			t.Errorf("original %v: restored shares %d, want 100", original, *got.Spec.Limited.NominalConcurrencyShares)
		}
		if len(got.Annotations) != len(original) || got.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != original[flowcontrolv1.AutoUpdateAnnotationKey] {
			t.Errorf("restored annotations %v, want %v", got.Annotations, original)
		}
		if native.IsDonor(&got) {
			t.Errorf("restored level still carries the records: %v", got.Annotations)
		}
	}
}

// TestDonorRefused: each donor that cannot give reports DonorRefused on spec.sharesFrom with
// the reason, writes no level and touches no donor.
func TestDonorRefused(t *testing.T) {
	owned := flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "apf-mine",
		Labels:      map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue},
		Annotations: map[string]string{flowv1.AnnotationSource: "RequestPriority/mine"}},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](50)}}}
	live := append(stockLevels(), owned)
	for _, c := range []struct {
		donor  string
		shares int32
		want   string
	}{
		{"nowhere", 5, "no PriorityLevelConfiguration of that name exists"},
		{"apf-mine", 5, "the operator's own projection"},
		{"exempt", 5, "an exempt level has no shares to give"},
		{"catch-all", 1, "mandatory levels are reset"},
		{"leader-election", 10, "would leave it 0, below 1: lower assuredConcurrencyShares to at most 9"},
	} {
		rps := []flowv1.RequestPriority{carving("tenant", 100, c.shares, c.donor)}
		plan := native.Project(effective.Compute(rps, nil), native.Existing{PriorityLevels: live})
		r := plan.RequestPriorities["tenant"]
		if r.Projected || r.Reason != flowv1.ReasonDonorRefused || !strings.Contains(r.Message, c.want) ||
			len(r.Errors) != 1 || r.Errors[0].Field != "spec.sharesFrom" {
			t.Errorf("donor %s: %s %q %v, want DonorRefused on spec.sharesFrom saying %q", c.donor, r.Reason, r.Message, r.Errors, c.want)
		}
		if len(plan.Donors) != 0 || len(plan.PriorityLevels) != 0 {
			t.Errorf("donor %s: refused carving still writes %d donors, %d levels", c.donor, len(plan.Donors), len(plan.PriorityLevels))
		}
	}
}

// TestSecondCarverRefusedWhenTheDonorRunsOut: levels are served highest priority first; the
// one that would take the donor below 1 share is refused with what is left.
func TestSecondCarverRefusedWhenTheDonorRunsOut(t *testing.T) {
	rps := []flowv1.RequestPriority{carving("first", 100, 6, "leader-election"), carving("second", 200, 4, "leader-election")}
	plan := native.Project(effective.Compute(rps, nil), native.Existing{PriorityLevels: stockLevels()})
	if !plan.RequestPriorities["first"].Projected {
		t.Fatalf("first not projected: %s", plan.RequestPriorities["first"].Message)
	}
	if r := plan.RequestPriorities["second"]; r.Projected || !strings.Contains(r.Message, "already take 6") ||
		!strings.Contains(r.Message, "at most 3") {
		t.Errorf("second: %v %s, want refused, at most 3", r.Projected, r.Message)
	}
	if got := *plan.Donors[0].Spec.Limited.NominalConcurrencyShares; got != 4 {
		t.Errorf("leader-election lowered to %d, want 10-6 = 4", got)
	}
}

// TestCarvingOfflineUsesTheBootstrapSet: with no native level known (offline validate), the
// donor is looked up in kube-apiserver's bootstrap set, and a carving beyond the budget's
// 27 shares is projected.
func TestCarvingOfflineUsesTheBootstrapSet(t *testing.T) {
	rps := []flowv1.RequestPriority{carving("tenant", 100, 90, "workload-low"), withShares(requestPriority("own", 200, 1, 0), 27)}
	plan := native.Project(effective.Compute(rps, nil), native.Existing{})
	for _, name := range []string{"tenant", "own"} {
		if r := plan.RequestPriorities[name]; !r.Projected {
			t.Errorf("%s not projected offline: %s", name, r.Message)
		}
	}
	if len(plan.Donors) != 0 {
		t.Errorf("offline plan writes donors: %v", plan.Donors)
	}
}

// TestBudgetCountsTheDonorsOriginal: a lowered donor counts with its recorded shares in the
// budget, so carving leaves the budget of added levels where it was.
func TestBudgetCountsTheDonorsOriginal(t *testing.T) {
	live := stockLevels()
	for i := range live {
		if live[i].Name == "workload-low" {
			live[i] = *native.TakeOver(&live[i], 90)
		}
	}
	var sum int64
	for _, l := range native.UnownedLevels(live) {
		sum += int64(l.Shares)
	}
	if sum != 245 {
		t.Errorf("unowned levels hold %d shares in the budget, want the stock 245", sum)
	}
}
