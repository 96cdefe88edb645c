package apfmetrics

import (
	"sort"
	"time"
)

// Plus is the sum of two histograms (a bound missing from one counts as that one's next
// lower bucket would; kube-apiserver's buckets are fixed, so bounds agree in practice).
func (h Histogram) Plus(o Histogram) Histogram {
	out := Histogram{Bounds: append([]float64(nil), h.Bounds...), Counts: append([]float64(nil), h.Counts...), Count: h.Count + o.Count, Sum: h.Sum + o.Sum}
	for i, b := range o.Bounds {
		out.addBucket(b, o.Counts[i])
	}
	return out
}

// Merge sums snapshots of several kube-apiserver replicas read at about the same time: seats,
// counters and gauges add up, histograms merge (the demand histograms and gauges too). Its time is the mean of theirs. Nil for none.
func Merge(snaps ...*Snapshot) *Snapshot {
	if len(snaps) == 0 {
		return nil
	}
	out := &Snapshot{Levels: map[string]LevelSeats{}, Flows: map[Key]*Flow{}, Demand: map[string]*LevelDemand{}}
	var sum time.Duration
	for _, s := range snaps {
		sum += s.Time.Sub(snaps[0].Time)
		for name, l := range s.Levels {
			o := out.Levels[name]
			out.Levels[name] = LevelSeats{Nominal: o.Nominal + l.Nominal, Lower: o.Lower + l.Lower,
				Upper: o.Upper + l.Upper, CurrentLimit: o.CurrentLimit + l.CurrentLimit}
		}
		for k, f := range s.Flows {
			o := out.flow(k)
			o.Dispatched += f.Dispatched
			o.InQueue += f.InQueue
			o.Executing += f.Executing
			o.ExecutingSeats += f.ExecutingSeats
			for reason, v := range f.Rejected {
				o.Rejected[reason] += v
			}
			o.Wait = o.Wait.Plus(f.Wait)
		}
		for level, d := range s.Demand {
			out.Demand[level] = out.Demand[level].plus(d)
		}
	}
	for _, s := range snaps {
		out.Replicas = append(out.Replicas, s.Replicas...)
	}
	sort.Strings(out.Replicas)
	out.Time = snaps[0].Time.Add(sum / time.Duration(len(snaps)))
	return out
}
