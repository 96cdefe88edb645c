package reconcileutil

import "github.com/prometheus/client_golang/prometheus"

// RegisterAll registers every collector into reg, stopping at the first error.
func RegisterAll(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
