package harness

import (
	"context"
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// LevelGauges reads kube-apiserver's /metrics once and returns the value of each of the given
// apiserver_flowcontrol_* gauges by priority level: gauges[name][level]. test/budget and
// test/budgetorder read the nominal, lower, upper and current seats of every level from one
// scrape, so that they are of the same moment.
func LevelGauges(ctx context.Context, cfg *rest.Config, names ...string) (map[string]map[string]float64, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := dc.RESTClient().Get().AbsPath("/metrics").SetHeader("Accept", "text/plain").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading kube-apiserver's /metrics: %w", err)
	}
	families, err := apfmetrics.Parse(raw, names...)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for _, name := range names {
		out[name] = map[string]float64{}
		fam := families[name]
		if fam == nil {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "priority_level" && m.GetGauge() != nil {
					out[name][l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out, nil
}
