package report

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"

	"github.com/tenon-sh/tenon/pkg/sim"
)

// policyColors colour the policies the same way in every chart; others take the fallbacks.
var policyColors = map[string]string{
	sim.PolicyTenon:     "#2563eb",
	sim.PolicyKarpenter: "#d97706",
	sim.PolicyNodeGroup: "#059669",
}

var fallbackColors = []string{"#7c3aed", "#db2777", "#0891b2", "#65a30d"}

const boundColor = "#6b7280"

// typeColors colour the instance-type mix.
var typeColors = []string{"#1d4ed8", "#b45309", "#047857", "#7c3aed", "#be123c", "#0e7490", "#4d7c0f", "#a16207", "#6d28d9", "#9ca3af"}

func colorOf(rep *sim.Report, i int) string {
	if c, ok := policyColors[rep.Policies[i].Policy]; ok {
		return c
	}
	return fallbackColors[i%len(fallbackColors)]
}

const css = `body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:960px;color:#111827;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #e5e7eb;padding-bottom:.2em}
table{border-collapse:collapse;width:100%;margin:.5em 0}td,th{padding:.3em .6em;border-bottom:1px solid #f3f4f6;text-align:right}
th:first-child,td:first-child{text-align:left}th{font-weight:600;background:#f9fafb}
.muted{color:#6b7280}.grid{stroke:#e5e7eb;stroke-width:1}.tick{font-size:11px;fill:#6b7280}.label{font-size:12px;fill:#111827}
.legend span{display:inline-block;margin-right:1.2em}.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.35em;vertical-align:-.1em;border-radius:2px}
code{background:#f3f4f6;padding:0 .25em;border-radius:3px}li{margin:.2em 0}`

// WriteHTML writes the report as one self-contained HTML page: inline CSS and SVG, no script,
// nothing fetched from the network.
func WriteHTML(w io.Writer, rep *sim.Report) error {
	var b strings.Builder
	in := rep.Input
	e := html.EscapeString
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>tenon simulate: %s</title><style>%s</style></head><body>\n", e(in.Source), css)
	fmt.Fprintf(&b, "<h1>tenon simulate</h1><p class=\"muted\">%s: %s jobs (%s pods) over %s, replayed under %d policies (seed %d, %.1f s).</p>\n",
		e(in.Source), thousands(int64(in.Jobs)), thousands(int64(in.Pods)), span(in.SpanHours), len(rep.Policies), rep.Settings.Seed, rep.WallSeconds)
	if rep.Incomplete {
		b.WriteString("<p><b>Incomplete: the replay was stopped before its end</b>; each policy's figures cover the virtual time it reached (below).</p>\n")
	}
	writeCost(&b, rep)
	writeBill(&b, rep)
	writeSeries(&b, rep)
	writeTables(&b, rep)
	writeMix(&b, rep)
	writeInput(&b, rep)
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func legend(rep *sim.Report, withBound bool) string {
	var b strings.Builder
	b.WriteString(`<p class="legend">`)
	for i, p := range rep.Policies {
		fmt.Fprintf(&b, `<span><i class="swatch" style="background:%s"></i>%s</span>`, colorOf(rep, i), html.EscapeString(p.Policy))
	}
	if withBound && rep.Bound != nil {
		fmt.Fprintf(&b, `<span><i class="swatch" style="background:%s"></i>lower bound (dashed)</span>`, boundColor)
	}
	b.WriteString(`</p>`)
	return b.String()
}

func writeCost(b *strings.Builder, rep *sim.Report) {
	b.WriteString("<h2>Total cost</h2>\n")
	var bars []bar
	for i, p := range rep.Policies {
		note := ""
		if bc := boundCost(rep); bc > 0 {
			note = fmt.Sprintf("  (%s the bound)", ratio(p.CostUSD, bc))
		}
		bars = append(bars, bar{label: p.Policy, value: p.CostUSD, color: colorOf(rep, i), note: note})
	}
	if rep.Bound != nil {
		bars = append(bars, bar{label: "lower bound", value: rep.Bound.CostUSD, color: boundColor})
	}
	b.WriteString(barChart(bars, dollars))
	b.WriteString(`<p class="muted">The lower bound is, at every instant, the cheapest fractional fleet that covers the pods then running had every job started at its submission (a linear program per change point), integrated over time. No fleet that runs the workload can cost less.</p>`)
	for _, p := range rep.Policies {
		if p.Incomplete {
			fmt.Fprintf(b, "<p><b>%s</b>: <b>incomplete</b>, stopped at %s of %s: its figures cover only that much and are not comparable with the bound.</p>", html.EscapeString(p.Policy), span(p.EndHours), span(rep.Input.SpanHours))
			continue
		}
		if held := p.PodsNeverStarted - p.PodsUnplaceable; held > 0 {
			fmt.Fprintf(b, "<p><b>%s</b>: %s pods that some instance type holds never ran (NodePool limits, or capacity it could not buy), so its cost is not comparable with the bound.</p>", html.EscapeString(p.Policy), thousands(int64(held)))
		}
	}
}

func writeSeries(b *strings.Builder, rep *sim.Report) {
	if len(rep.Policies) == 0 {
		return
	}
	step := rep.Policies[0].Series.StepSeconds / 3600
	b.WriteString("<h2>Cost over time</h2>\n")
	var lines []series
	for i, p := range rep.Policies {
		lines = append(lines, series{name: p.Policy, color: colorOf(rep, i), ys: p.Series.CostPerHour})
	}
	if rep.Bound != nil {
		lines = append(lines, series{name: "lower bound", color: boundColor, dashed: true, ys: rep.Bound.CostPerHour})
	}
	b.WriteString(legend(rep, true))
	b.WriteString(lineChart(lines, step, func(v float64) string { return "$" + trimFloat(v) + "/h" }, 0))
	for _, res := range []struct {
		name string
		get  func(*sim.PolicyResult) []float64
	}{
		{"CPU", func(p *sim.PolicyResult) []float64 { return p.Series.CPU }},
		{"memory", func(p *sim.PolicyResult) []float64 { return p.Series.Memory }},
		{"GPU", func(p *sim.PolicyResult) []float64 { return p.Series.GPU }},
		{"shares of shared GPUs", func(p *sim.PolicyResult) []float64 { return p.Series.GPUShares }},
	} {
		if !slices.ContainsFunc(rep.Policies, func(p *sim.PolicyResult) bool { return len(res.get(p)) > 0 }) {
			continue // no GPU is shared
		}
		fmt.Fprintf(b, "<h2>Allocated ÷ provisioned %s</h2>\n", res.name)
		lines = lines[:0]
		for i, p := range rep.Policies {
			lines = append(lines, series{name: p.Policy, color: colorOf(rep, i), ys: res.get(p)})
		}
		b.WriteString(legend(rep, false))
		b.WriteString(lineChart(lines, step, pct, 1))
	}
	b.WriteString(`<p class="muted">Provisioned counts every node paid for (booting ones too) at its allocatable; allocated counts the requests of running pods and of DaemonSets.</p>`)
}

func writeTables(b *strings.Builder, rep *sim.Report) {
	b.WriteString("<h2>Pods and nodes</h2>\n<table><tr><th>policy</th><th>pending p50</th><th>pending p99</th><th>pending max</th><th>never ran</th><th>nodes launched</th><th>nodes disrupted</th><th>pods evicted</th><th>saved by disruption</th><th>evicted per $ saved</th><th>stranded GPU-hours</th></tr>\n")
	for _, p := range rep.Policies {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td title=\"%s\">%s</td><td>%s</td><td>%s/h</td><td>%s</td><td>%s</td></tr>\n",
			html.EscapeString(p.Policy), seconds(p.PendingP50Seconds), seconds(p.PendingP99Seconds), seconds(p.PendingMaxSeconds),
			thousands(int64(p.PodsNeverStarted)), thousands(int64(p.NodesLaunched)), html.EscapeString(reasons(p)), thousands(int64(p.DisruptedTotal())),
			thousands(int64(p.PodsEvicted)), dollars(p.SavingsPerHour), perDollar(p), thousands(int64(p.StrandedGPUHours)))
	}
	b.WriteString("</table>\n<p class=\"muted\">Pending time runs from a pod's submission to its first start. Stranded GPU-hours are GPUs paid for and idle (booting nodes included). Evictions per dollar count the pods on the nodes of disruption commands against each command's hourly saving over one hour.</p>\n")
	b.WriteString("<h2>Disruptions by reason</h2>\n<table><tr><th>policy</th><th>nodes disrupted</th><th>utilisation cpu / memory / GPU</th><th>solver calls</th><th>run time</th></tr>\n")
	for _, p := range rep.Policies {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s / %s / %s</td><td>%s</td><td>%.1f s</td></tr>\n", html.EscapeString(p.Policy), html.EscapeString(reasons(p)),
			pct(p.Utilisation.CPU), pct(p.Utilisation.Memory), pct(p.Utilisation.GPU), thousands(int64(p.Stats.SolverCalls)), p.WallSeconds)
	}
	b.WriteString("</table>\n")
}

func writeMix(b *strings.Builder, rep *sim.Report) {
	b.WriteString("<h2>Instance-type mix (share of cost)</h2>\n")
	for _, p := range rep.Policies {
		fmt.Fprintf(b, "<h3>%s</h3>\n", html.EscapeString(p.Policy))
		var segs []segment
		other := 0.0
		for i, u := range p.TypeMix {
			if i < len(typeColors)-1 {
				segs = append(segs, segment{label: u.Type + " " + u.CapacityType, value: u.CostUSD, color: typeColors[i]})
			} else {
				other += u.CostUSD
			}
		}
		if other > 0 {
			segs = append(segs, segment{label: "other", value: other, color: typeColors[len(typeColors)-1]})
		}
		b.WriteString(stackedBar(segs, dollars))
	}
}

func writeInput(b *strings.Builder, rep *sim.Report) {
	e := html.EscapeString
	in, s := rep.Input, rep.Settings
	b.WriteString("<h2>Input and settings</h2>\n<table>")
	row := func(k, v string) {
		fmt.Fprintf(b, "<tr><td>%s</td><td style=\"text-align:left\">%s</td></tr>", e(k), e(v))
	}
	row("workload", fmt.Sprintf("%s: %d jobs, %d pods, %s", in.Source, in.Jobs, in.Pods, span(in.SpanHours)))
	row("pod shapes", strings.Join(in.Shapes, "; "))
	row("NodePools", strings.Join(in.NodePools, "; "))
	row("seed", fmt.Sprint(s.Seed))
	row("boot delay", s.BootDelay)
	row("spot interruptions", s.Spot)
	row("kube-scheduler scoring", s.Scheduler)
	row("provisioning batches", s.Batch)
	row("disruption passes", fmt.Sprintf("every %.0f s", s.PassSeconds))
	row("restart penalty", s.RestartDelay)
	if s.UntilHours > 0 {
		row("replayed until", span(s.UntilHours))
	}
	b.WriteString("</table>\n")
	if len(in.Skipped) > 0 {
		b.WriteString("<h2>Skipped rows</h2>\n<table><tr><th>reason</th><th>rows</th><th>first line</th><th>example</th></tr>")
		for _, sk := range in.Skipped {
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%d</td><td style=\"text-align:left\">%s</td></tr>", e(sk.Reason), thousands(int64(sk.Count)), sk.FirstLine, e(sk.Example))
		}
		b.WriteString("</table>\n")
	}
	if rep.Bound != nil && rep.Bound.UnplaceablePods > 0 {
		fmt.Fprintf(b, "<p>%s pods fit no instance type of any NodePool: no policy can run them, and the bound leaves them out.</p>", thousands(int64(rep.Bound.UnplaceablePods)))
	}
	b.WriteString("<h2>Assumptions</h2>\n<ul>")
	for _, a := range rep.Assumptions {
		fmt.Fprintf(b, "<li>%s</li>", e(a))
	}
	b.WriteString("</ul>\n")
}

// writeBill writes the bill with commitments, when the replay had some: each policy's bill and
// the commitments' utilisation over time.
func writeBill(b *strings.Builder, rep *sim.Report) {
	if !slices.ContainsFunc(rep.Policies, func(p *sim.PolicyResult) bool { return p.Bill != nil }) {
		return
	}
	b.WriteString("<h2>Bill with commitments</h2>\n<table><tr><th>policy</th><th>committed</th><th>beyond</th><th>bill</th><th>at list prices</th><th>commitments used</th></tr>\n")
	for _, p := range rep.Policies {
		if p.Bill == nil {
			continue
		}
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td><b>%s</b></td><td>%s</td><td>%s</td></tr>\n", html.EscapeString(p.Policy),
			dollars(p.Bill.CommitmentUSD), dollars(p.Bill.OverageUSD), dollars(p.Bill.TotalUSD), dollars(p.CostUSD), pct(p.Bill.Utilization))
	}
	if rep.Bound != nil && rep.Bound.BillUSD > 0 {
		fmt.Fprintf(b, "<tr><td>lower bound</td><td></td><td></td><td>%s</td><td></td><td></td></tr>\n", dollars(rep.Bound.BillUSD))
	}
	b.WriteString("</table>\n<p class=\"muted\">The lower bound is, in each stretch of time, the commitments' fixed part plus the list-price bound less the most on-demand usage the commitments could cover: no fleet that runs the workload can be billed less. Committed is what the Savings Plans and Reserved Instances cost over the replay whether used or not; beyond is the usage they left uncovered, at list prices. tenon decides with what an instance adds to the bill; tenon-list-prices is tenon deciding at list prices; karpenter-like and node-groups decide at list prices, as those autoscalers do. Used is each commitment's share in use, averaged over the commitments and the time.</p>\n")
	step := rep.Policies[0].Series.StepSeconds / 3600
	var lines []series
	for i, p := range rep.Policies {
		if len(p.Series.CommitmentUtilization) > 0 {
			lines = append(lines, series{name: p.Policy, color: colorOf(rep, i), ys: p.Series.CommitmentUtilization})
		}
	}
	b.WriteString("<h2>Commitments used</h2>\n")
	b.WriteString(legend(rep, false))
	b.WriteString(lineChart(lines, step, pct, 1))
}
