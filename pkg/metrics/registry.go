package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	mu         sync.Mutex
	collectors []prometheus.Collector
)

// MustRegister registers the collectors on controller-runtime's registry (panicking, as
// prometheus.MustRegister does, on a duplicate) and remembers them for Names.
func MustRegister(cs ...prometheus.Collector) {
	crmetrics.Registry.MustRegister(cs...)
	mu.Lock()
	defer mu.Unlock()
	collectors = append(collectors, cs...)
}

// Names returns the fully-qualified name of every metric registered through MustRegister,
// sorted; a metric appears whether or not it has a series yet.
func Names() []string {
	var out []string
	for _, m := range Described() {
		out = append(out, m.Name)
	}
	return out
}
