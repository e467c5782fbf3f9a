package metrics

import (
	"sort"
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
	mu.Lock()
	cs := append([]prometheus.Collector(nil), collectors...)
	mu.Unlock()
	seen := map[string]bool{}
	ch := make(chan *prometheus.Desc)
	go func() {
		for _, c := range cs {
			c.Describe(ch)
		}
		close(ch)
	}()
	for d := range ch {
		seen[FQName(d)] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
