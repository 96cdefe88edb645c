package nativeview

import (
	"fmt"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// WithMetrics returns the view with the seats of one kube-apiserver's /metrics text, as
// internal/apfmetrics reads them (the one reader of seats): each level's reported nominal seats
// and the server's concurrency limit. When the text has no seats, or no server limit, the
// returned view's SeatsError says why, and what the metrics do not give is unknown: the view's
// own server limit (Bootstrap's default) is replaced, never kept.
func (v *View) WithMetrics(raw []byte) *View {
	out := *v
	out.SeatsError, out.levelSeats, out.serverSeats = nil, nil, 0
	seats, err := apfmetrics.ParseSeats(raw)
	if err != nil {
		out.SeatsError = err
		return &out
	}
	out.levelSeats, out.serverSeats = seats.Nominal, seats.ServerLimit
	if seats.ServerLimit == 0 {
		out.SeatsError = fmt.Errorf("kube-apiserver's /metrics has no %s of the %s level, which tells the server's "+
			"concurrency limit", apfmetrics.UpperSeatsMetric, apfmetrics.ExemptLevel)
	}
	return &out
}
