package apfmetrics

// demandOf extracts each level's seat demand from families: the DemandMetric histogram and
// the gauges of the last adjustment period. A level appears only when it has a DemandMetric
// series (the gauges alone do not make a window).
func demandOf(f Families) map[string]*LevelDemand {
	out := map[string]*LevelDemand{}
	for _, m := range f[DemandMetric].GetMetric() {
		level := Label(m, LevelLabel)
		d := out[level]
		if d == nil {
			d = &LevelDemand{}
			out[level] = d
		}
		d.Ratio.add(m.GetHistogram())
	}
	gauge := func(name string, set func(*LevelDemand, float64)) {
		for level, v := range f.ByLabel(name, LevelLabel) {
			if d := out[level]; d != nil {
				set(d, v)
			}
		}
	}
	gauge(DemandHighWatermarkMetric, func(d *LevelDemand, v float64) { d.HighWatermark = v })
	gauge(DemandAverageMetric, func(d *LevelDemand, v float64) { d.Average = v })
	gauge(DemandStdevMetric, func(d *LevelDemand, v float64) { d.Stdev = v })
	return out
}

// plus is the sum of two replicas' demand of one level (nil counts as none).
func (d *LevelDemand) plus(o *LevelDemand) *LevelDemand {
	if d == nil {
		d = &LevelDemand{}
	}
	return &LevelDemand{Ratio: d.Ratio.Plus(o.Ratio), HighWatermark: d.HighWatermark + o.HighWatermark,
		Average: d.Average + o.Average, Stdev: d.Stdev + o.Stdev}
}
