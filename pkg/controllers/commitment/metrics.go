package commitment

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenon-sh/tenon/pkg/commitment"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

var (
	utilization = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tenon_commitment_utilization_ratio",
		Help: "Share of each active Commitment the fleet tenon manages uses (0 to 1): dollars per hour of a Savings Plan, instances or normalized units of Reserved Instances.",
	}, []string{"commitment", "kind"})
	coveredInstances = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tenon_commitment_covered_instances",
		Help: "Instances each active Commitment covers, wholly or in part.",
	}, []string{"commitment", "kind"})
	coverage = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "tenon_commitment_coverage_ratio",
		Help: "Share of the fleet's on-demand usage, at on-demand prices, that Commitments cover (0 to 1; 0 with no on-demand usage).",
	})
	bill = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tenon_commitment_bill_dollars_per_hour",
		Help: "The fleet's hourly bill as tenon prices it: part=commitment is what active Commitments cost whether used or not, part=overage the usage they do not cover at list prices.",
	}, []string{"part"})
)

func init() {
	metrics.MustRegister(utilization, coveredInstances, coverage, bill)
}

// record sets the metrics from one evaluation.
func setMetrics(book *commitment.Book, b commitment.Bill, util []float64) {
	utilization.Reset()
	coveredInstances.Reset()
	if book != nil {
		for i, c := range book.Commitments() {
			utilization.WithLabelValues(c.Name, c.Kind.String()).Set(util[i])
			coveredInstances.WithLabelValues(c.Name, c.Kind.String()).Set(float64(b.Covered[i]))
		}
	}
	if b.OnDemand > 0 {
		coverage.Set(b.CoveredOnDemand / b.OnDemand)
	} else {
		coverage.Set(0)
	}
	bill.WithLabelValues("commitment").Set(b.Fixed)
	bill.WithLabelValues("overage").Set(b.Overage)
}
