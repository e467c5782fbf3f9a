package metrics

import (
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Metric describes one registered metric.
type Metric struct {
	Name string
	// Type is counter, gauge, histogram or summary.
	Type string
	// Labels are the variable label names, sorted.
	Labels []string
}

var (
	fqNameRE = regexp.MustCompile(`fqName: "([^"]*)"`)
	labelsRE = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

// FQName returns the name a descriptor describes. prometheus.Desc keeps it unexported; its
// String form carries it.
func FQName(d *prometheus.Desc) string {
	if m := fqNameRE.FindStringSubmatch(d.String()); m != nil {
		return m[1]
	}
	return ""
}

func labelNames(d *prometheus.Desc) []string {
	m := labelsRE.FindStringSubmatch(d.String())
	if m == nil || m[1] == "" {
		return nil
	}
	out := strings.Split(m[1], ",")
	sort.Strings(out)
	return out
}

// Described returns every metric registered through MustRegister, by name.
func Described() []Metric {
	mu.Lock()
	cs := append([]prometheus.Collector(nil), collectors...)
	mu.Unlock()
	var out []Metric
	for _, c := range cs {
		typ := typeOf(c)
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			out = append(out, Metric{Name: FQName(d), Type: typ, Labels: labelNames(d)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// typeOf is a collector's metric type: from its vector type, or else from the one sample an
// unlabeled metric always has.
func typeOf(c prometheus.Collector) string {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	}
	ch := make(chan prometheus.Metric, 1)
	go func() { c.Collect(ch); close(ch) }()
	typ := "untyped"
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			continue
		}
		switch {
		case pb.Counter != nil:
			typ = "counter"
		case pb.Gauge != nil:
			typ = "gauge"
		case pb.Histogram != nil:
			typ = "histogram"
		case pb.Summary != nil:
			typ = "summary"
		}
	}
	return typ
}
