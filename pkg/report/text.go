package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/sim"
)

// WriteSummary writes the terminal summary: the input, one line per policy with its cost
// against the bound and its main figures, the bound, and what was skipped or assumed.
func WriteSummary(w io.Writer, rep *sim.Report) error {
	in := rep.Input
	fmt.Fprintf(w, "%s: %s jobs (%s pods) over %s; seed %d; %d policies in %.1fs\n\n",
		in.Source, thousands(int64(in.Jobs)), thousands(int64(in.Pods)), span(in.SpanHours), rep.Settings.Seed, len(rep.Policies), rep.WallSeconds)
	if rep.Incomplete {
		fmt.Fprintf(w, "INCOMPLETE: the replay was stopped before its end (see below)\n\n")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policy\tcost\tvs bound\tpending p50/p99\tnodes\tdisrupted\tevicted\tevicted/$ saved\tstranded GPU-h\talloc/prov cpu mem gpu\tnever ran")
	for _, p := range rep.Policies {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s / %s\t%s\t%s\t%s\t%s\t%s\t%s %s %s\t%s\n",
			p.Policy, dollars(p.CostUSD), ratio(p.CostUSD, boundCost(rep)),
			seconds(p.PendingP50Seconds), seconds(p.PendingP99Seconds),
			thousands(int64(p.NodesLaunched)), thousands(int64(p.DisruptedTotal())), thousands(int64(p.PodsEvicted)), perDollar(p),
			thousands(int64(p.StrandedGPUHours)), pct(p.Utilisation.CPU), pct(p.Utilisation.Memory), pct(p.Utilisation.GPU),
			thousands(int64(p.PodsNeverStarted)))
	}
	if rep.Bound != nil {
		fmt.Fprintf(tw, "bound\t%s\t1.000×\t\t\t\t\t\t\t\t\n", dollars(rep.Bound.CostUSD))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if slices.ContainsFunc(rep.Policies, func(p *sim.PolicyResult) bool { return p.Bill != nil }) {
		fmt.Fprintln(w, "\nbill with commitments (committed + beyond = bill; at list prices; commitments used):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range rep.Policies {
			if b := p.Bill; b != nil {
				fmt.Fprintf(tw, "  %s\t%s + %s\t= %s\t%s at list prices\t%s used\n", p.Policy, dollars(b.CommitmentUSD), dollars(b.OverageUSD), dollars(b.TotalUSD), dollars(p.CostUSD), pct(b.Utilization))
			}
		}
		if rep.Bound != nil && rep.Bound.BillUSD > 0 {
			fmt.Fprintf(tw, "  bound\t\t= %s\t\t(no fleet's bill can be lower)\n", dollars(rep.Bound.BillUSD))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, p := range rep.Policies {
		switch {
		case p.Utilisation.GPUShares <= 0:
		case strings.HasPrefix(rep.Input.ShareResource, catalog.MIGResourcePrefix):
			fmt.Fprintf(w, "%s: MIG instances (%s) allocated %s of provisioned (GPU utilisation above counts an instance as its share of a GPU)\n", p.Policy, rep.Input.ShareResource, pct(p.Utilisation.GPUShares))
		default:
			fmt.Fprintf(w, "%s: shares of shared GPUs allocated %s of provisioned (GPU utilisation above counts a share as its fraction of a GPU)\n", p.Policy, pct(p.Utilisation.GPUShares))
		}
	}
	if rep.Bound != nil && rep.Bound.UnplaceablePods > 0 {
		fmt.Fprintf(w, "\n%s pods fit no instance type of any NodePool: no policy can run them and the bound leaves them out\n", thousands(int64(rep.Bound.UnplaceablePods)))
	}
	for _, p := range rep.Policies {
		if p.Incomplete {
			fmt.Fprintf(w, "%s: INCOMPLETE, stopped at %s of %s: its figures cover only that much and are not comparable with the bound\n", p.Policy, span(p.EndHours), span(in.SpanHours))
			continue
		}
		if held := p.PodsNeverStarted - p.PodsUnplaceable; held > 0 {
			fmt.Fprintf(w, "%s: %s pods that some instance type holds never ran (NodePool limits, or capacity it could not buy): its cost is not comparable with the bound\n", p.Policy, thousands(int64(held)))
		}
	}
	if len(in.Skipped) > 0 {
		fmt.Fprintln(w, "\nskipped rows:")
		for _, s := range in.Skipped {
			fmt.Fprintf(w, "  %s: %s (first on line %d: %s)\n", s.Reason, thousands(int64(s.Count)), s.FirstLine, s.Example)
		}
	}
	fmt.Fprintln(w, "\nassumptions:")
	for _, a := range rep.Assumptions {
		fmt.Fprintf(w, "  - %s\n", strings.TrimSpace(a))
	}
	return nil
}

func boundCost(rep *sim.Report) float64 {
	if rep.Bound == nil {
		return 0
	}
	return rep.Bound.CostUSD
}
