package recommend

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// report is what recommend prints, whatever the output format.
type report struct {
	// Source says where the metrics came from; Window how long they span.
	Source string
	Window time.Duration
	Rows   []row
	// Skipped are the RequestPriorities left out of the pool.
	Skipped []skip
	// TotalShares is the pool's sum of shares, today and recommended (equal).
	TotalShares int32
}

// row is one level of the pool: today, recommended, and the demand behind it.
type row struct {
	Object, Level                 string
	Shares, RecommendedShares     int32
	Seats, ProjectedSeats         float64
	DemandSeats, Peak, Rejected   float64
	WaitP99                       float64
	WaitKnown                     bool
	Lendable, RecommendedLendable int32
	Borrowing, RecommendedBorrow  *int32
	Why                           string
	// Where is the RequestPriority's place in the manifests (-f), zero when unknown.
	Where location
}

// sharesChanged, lendableChanged and borrowingChanged say which spec fields the patch sets.
func (r row) sharesChanged() bool   { return r.Shares != r.RecommendedShares }
func (r row) lendableChanged() bool { return r.Lendable != r.RecommendedLendable }
func (r row) borrowingChanged() bool {
	if r.Borrowing == nil || r.RecommendedBorrow == nil {
		return (r.Borrowing == nil) != (r.RecommendedBorrow == nil)
	}
	return *r.Borrowing != *r.RecommendedBorrow
}

// changed says whether the row patches its RequestPriority.
func (r row) changed() bool { return r.sharesChanged() || r.lendableChanged() || r.borrowingChanged() }

// changes counts the rows that patch their RequestPriority.
func (rep *report) changes() int {
	n := 0
	for _, r := range rep.Rows {
		if r.changed() {
			n++
		}
	}
	return n
}

// buildReport turns the recommendations into rows ordered by RequestPriority, and checks that
// the pool's total shares are unchanged: a recommendation that changed them would change every
// other level's nominal seats, so it is never printed.
func buildReport(recs map[string]autopilot.Recommendation, levels []autopilot.Level, where map[string]location) (*report, error) {
	rep := &report{}
	var recommended int32
	for _, l := range levels {
		rec, ok := recs[l.Name]
		if !ok {
			return nil, fmt.Errorf("the recommender returned nothing for level %s (RequestPriority %s)", l.Name, l.Object)
		}
		rep.TotalShares += l.Shares
		recommended += rec.Shares
		rep.Rows = append(rep.Rows, newRow(l, rec, where[l.Object]))
	}
	if recommended != rep.TotalShares {
		return nil, fmt.Errorf("the recommendation changes the total shares of the operator's levels from %d to %d; "+
			"refusing to print it (it would change every other level's nominal seats)", rep.TotalShares, recommended)
	}
	sort.Slice(rep.Rows, func(i, j int) bool { return rep.Rows[i].Object < rep.Rows[j].Object })
	return rep, nil
}

func newRow(l autopilot.Level, rec autopilot.Recommendation, where location) row {
	r := row{
		Object: l.Object, Level: l.Name, Shares: l.Shares, RecommendedShares: rec.Shares,
		Seats: rec.Demand.NominalSeats, ProjectedSeats: projectedSeats(rec.Demand.NominalSeats, l.Shares, rec.Shares),
		DemandSeats: rec.Demand.Seats, Peak: rec.Demand.Peak, Rejected: rec.Demand.Rejected,
		WaitP99: rec.Demand.WaitP99, WaitKnown: rec.Demand.WaitKnown,
		Lendable: l.LendablePercent, RecommendedLendable: rec.LendablePercent,
		Borrowing: l.BorrowingLimitPercent, RecommendedBorrow: rec.BorrowingLimitPercent,
		Why: rec.Why, Where: where,
	}
	r.Why = withLimitChanges(r)
	return r
}

// projectedSeats estimates the nominal seats at the recommended shares. kube-apiserver gives
// ceil(SCL x shares / sum of shares); the sum is unchanged, so the seats scale with the shares
// (the ceiling may make them differ by one).
func projectedSeats(seats float64, shares, recommended int32) float64 {
	if shares == recommended || shares == 0 {
		return seats
	}
	return math.Round(seats * float64(recommended) / float64(shares))
}

// withLimitChanges adds the lendable and borrowing changes to the why when it does not name
// them.
func withLimitChanges(r row) string {
	why := r.Why
	if r.lendableChanged() && !strings.Contains(why, "lendablePercent") {
		why = joinWhy(why, fmt.Sprintf("lendablePercent %d -> %d", r.Lendable, r.RecommendedLendable))
	}
	if r.borrowingChanged() && !strings.Contains(why, "borrowingLimitPercent") {
		why = joinWhy(why, fmt.Sprintf("borrowingLimitPercent %s -> %s", percent(r.Borrowing), percent(r.RecommendedBorrow)))
	}
	return why
}

func joinWhy(why, more string) string {
	if why == "" {
		return more
	}
	return why + "; " + more
}

// percent is a borrowing limit: "none" when absent.
func percent(p *int32) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
