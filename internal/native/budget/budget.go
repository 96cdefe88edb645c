// Package budget bounds the assured concurrency shares that the operator's native priority
// levels may take, so that kube-apiserver's own levels keep their nominal seats.
//
// kube-apiserver gives a Limited priority level ceil(SCL × NCS(l) / ΣNCS) nominal seats, where
// SCL is its server concurrency limit (--max-requests-inflight + --max-mutating-requests-inflight)
// and ΣNCS sums the nominalConcurrencyShares of every level, exempt's included
// (k8s.io/apiserver pkg/util/flowcontrol/apf_controller.go). Let K be the shares of the levels
// the operator does not own (kube-apiserver's mandatory and suggested levels, 245 on a stock
// cluster, plus any a provider or an admin added) and A the shares of the levels the operator
// writes. Every level the operator does not own then keeps K/(K+A) of the share of the server
// it had without the operator, so "lose at most p%" holds exactly when A ≤ floor(K·p/(100−p))
// (27 shares at p = 10 on a stock cluster). Seats are rounded up per level, so on a server
// with a small SCL a level can lose one seat more than that share; when SCL is known, New's
// budget also keeps every level's rounded seats at (100−p)% or more.
//
// The budget also bounds borrowing (borrowing.go): the operator's levels may borrow at most p% of
// the seats the kept levels lend, and a projected level without a borrowing limit gets
// DefaultBorrowingLimitPercent.
//
// The budget protects every level the operator does not own, not only the control plane's:
// simpler, and it covers levels a provider adds. When the cluster's levels are not known
// (offline validation), the mandatory and suggested levels of k8s.io/apiserver stand for them.
package budget

import (
	"fmt"
	"math"
	"sort"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// DefaultMaxLossPercent is the default most a level the operator does not own may lose of its
// share of the server, in percent.
const DefaultMaxLossPercent = 10

// MaxMaxLossPercent is the largest loss that may be configured (100 would be no bound).
const MaxMaxLossPercent = 90

// Level is a native priority level the operator does not own, with its nominalConcurrencyShares
// and lendablePercent (0 when absent, as kube-apiserver defaults it).
type Level struct {
	Name            string
	Shares          int32
	LendablePercent int32
}

// Budget is how many shares the operator's levels may take in total.
type Budget struct {
	// MaxLossPercent is p: the most a kept level may lose of its share of the server.
	MaxLossPercent int32
	// Kept are the levels the operator does not own, by name; KeptShares is their sum K.
	Kept       []Level
	KeptShares int64
	// KeptLendable is Λ = Σ shares × lendablePercent of the kept levels (share-percent): what
	// they lend, in shares × 100 (borrowing.go).
	KeptLendable int64
	// ServerConcurrencyLimit is SCL in seats; 0 when unknown.
	ServerConcurrencyLimit int64
	// MaxShares is the most shares the operator's levels may hold together.
	MaxShares int64
	// Bootstrap is set when Kept are k8s.io/apiserver's mandatory and suggested levels, standing
	// for a cluster whose levels are not known.
	Bootstrap bool
}

// New computes the budget of the kept levels (the bootstrap levels when kept is empty) for a
// loss of at most maxLossPercent (clamped to 0..MaxMaxLossPercent) and a server concurrency
// limit scl (0 when unknown).
func New(kept []Level, maxLossPercent int32, scl int64) Budget {
	b := Budget{MaxLossPercent: min(max(maxLossPercent, 0), MaxMaxLossPercent), ServerConcurrencyLimit: max(scl, 0)}
	if len(kept) == 0 {
		kept, b.Bootstrap = BootstrapLevels(), true
	}
	b.Kept = append([]Level(nil), kept...)
	sort.Slice(b.Kept, func(i, j int) bool { return b.Kept[i].Name < b.Kept[j].Name })
	for _, l := range b.Kept {
		b.KeptShares += int64(max(l.Shares, 0))
		b.KeptLendable += int64(max(l.Shares, 0)) * int64(min(max(l.LendablePercent, 0), 100))
	}
	b.MaxShares = ShareRule(b.KeptShares, b.MaxLossPercent)
	if b.KeptShares == 0 { // the kept levels have no seats to lose
		b.MaxShares = math.MaxInt64
	} else if b.ServerConcurrencyLimit > 0 {
		b.MaxShares = b.seatRule(b.MaxShares)
	}
	return b
}

// ShareRule is floor(k·p/(100−p)): the most shares A such that every kept level keeps at least
// (100−p)% of its share of the server, k/(k+A).
func ShareRule(k int64, p int32) int64 {
	return k * int64(p) / int64(100-p)
}

// seatRule is the largest A ≤ limit such that every kept level keeps at least (100−p)% of its
// rounded nominal seats. Seats only fall as A grows, so a binary search finds it.
func (b Budget) seatRule(limit int64) int64 {
	lo, hi := int64(0), limit // lo always fits: A = 0 changes nothing
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if b.seatsKept(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// seatsKept reports whether every kept level keeps (100−p)% of its seats with the operator's
// levels holding total shares.
func (b Budget) seatsKept(total int64) bool {
	for _, l := range b.Kept {
		before := Seats(b.ServerConcurrencyLimit, int64(l.Shares), b.KeptShares)
		after := Seats(b.ServerConcurrencyLimit, int64(l.Shares), b.KeptShares+total)
		if 100*after < int64(100-b.MaxLossPercent)*before {
			return false
		}
	}
	return true
}

// Seats is kube-apiserver's nominal seats of a level: ceil(scl × shares / sum).
func Seats(scl, shares, sum int64) int64 {
	if sum <= 0 || shares <= 0 {
		return 0
	}
	return int64(math.Ceil(float64(scl) * float64(shares) / float64(sum)))
}

// Fits reports whether the operator's levels may hold total shares together.
func (b Budget) Fits(total int64) bool { return total <= b.MaxShares }

// Describe tells what every kept level with shares would be left with if the operator's
// levels held total shares, for instance "system: 30 of 100245 shares, 0.03% of the server
// instead of 12.2%" (in seats when SCL is known).
func (b Budget) Describe(total int64) string {
	var parts []string
	for _, l := range b.Kept {
		if l.Shares <= 0 {
			continue
		}
		n := int64(l.Shares)
		if b.ServerConcurrencyLimit > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d of %d seats instead of %d", l.Name,
				Seats(b.ServerConcurrencyLimit, n, b.KeptShares+total), b.ServerConcurrencyLimit,
				Seats(b.ServerConcurrencyLimit, n, b.KeptShares)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %d of %d shares, %s of the server instead of %s", l.Name, n,
			b.KeptShares+total, percent(n, b.KeptShares+total), percent(n, b.KeptShares)))
	}
	return strings.Join(parts, "; ")
}

// Explain is the arithmetic behind the budget, for error messages.
func (b Budget) Explain() string {
	whose := "the cluster's native levels the operator does not own"
	if b.Bootstrap {
		whose = "kube-apiserver's mandatory and suggested levels"
	}
	if b.KeptShares == 0 {
		return whose + " hold no shares, so they have no seats to lose: no bound"
	}
	rule := ShareRule(b.KeptShares, b.MaxLossPercent)
	out := fmt.Sprintf("%s hold %d shares; to keep at least %d%% of their share of the server the operator's "+
		"levels may hold at most floor(%d×%d/%d) = %d shares together", whose, b.KeptShares, 100-b.MaxLossPercent,
		b.KeptShares, b.MaxLossPercent, 100-b.MaxLossPercent, rule)
	if b.MaxShares < rule {
		out += fmt.Sprintf(", and with kube-apiserver's %d seats rounded up per level %d", b.ServerConcurrencyLimit, b.MaxShares)
	}
	return out
}

func percent(n, sum int64) string {
	if sum <= 0 {
		return "0%"
	}
	v := 100 * float64(n) / float64(sum)
	if v < 1 {
		return fmt.Sprintf("%.2f%%", v)
	}
	return fmt.Sprintf("%.1f%%", v)
}

// BootstrapLevels are kube-apiserver's mandatory and suggested priority levels (nativeview's
// bootstrap set) and their shares.
func BootstrapLevels() []Level {
	var out []Level
	for _, plc := range bootstrapset.PriorityLevels() {
		out = append(out, LevelOf(&plc))
	}
	return out
}

// LevelOf is a native level as the budget counts it.
func LevelOf(plc *flowcontrolv1.PriorityLevelConfiguration) Level {
	return Level{Name: plc.Name, Shares: Shares(plc), LendablePercent: Lendable(plc)}
}

// Lendable is a native level's lendablePercent with kube-apiserver's default (0).
func Lendable(plc *flowcontrolv1.PriorityLevelConfiguration) int32 {
	switch {
	case plc.Spec.Limited != nil && plc.Spec.Limited.LendablePercent != nil:
		return *plc.Spec.Limited.LendablePercent
	case plc.Spec.Exempt != nil && plc.Spec.Exempt.LendablePercent != nil:
		return *plc.Spec.Exempt.LendablePercent
	}
	return 0
}

// Shares is a native level's nominalConcurrencyShares with kube-apiserver's defaults: 30 for a
// Limited level that leaves it out, 0 for the exempt level.
func Shares(plc *flowcontrolv1.PriorityLevelConfiguration) int32 {
	switch {
	case plc.Spec.Limited != nil:
		if n := plc.Spec.Limited.NominalConcurrencyShares; n != nil {
			return *n
		}
		return 30
	case plc.Spec.Exempt != nil && plc.Spec.Exempt.NominalConcurrencyShares != nil:
		return *plc.Spec.Exempt.NominalConcurrencyShares
	}
	return 0
}
