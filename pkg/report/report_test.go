package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/sim"
)

func sample() *sim.Report {
	series := func(v float64) sim.Series {
		return sim.Series{StepSeconds: 3600, CostPerHour: []float64{v, 2 * v, v}, CPU: []float64{.5, .6, .7}, Memory: []float64{.2, .3, .4}, GPU: []float64{1, .9, .8}}
	}
	return &sim.Report{
		Input: sim.Input{Source: "trace <test>.csv", Jobs: 1234, Pods: 2345, Shapes: []string{"1×any GPU"}, SpanHours: 72,
			Skipped: []sim.SkipCount{{Reason: sim.SkipGPUType, Count: 3, FirstLine: 17, Example: `"P100" is not sold`}}, NodePools: []string{"gpu"}},
		Settings: sim.Settings{Seed: 9, BootDelay: "fixed:45s", Spot: "advisor", Scheduler: "least-allocated", Batch: "idle 1s, max 10s", PassSeconds: 10},
		Policies: []*sim.PolicyResult{
			{Policy: sim.PolicyTenon, CostUSD: 1100, PodsSubmitted: 2345, PodsStarted: 2343, PodsNeverStarted: 2, PodsUnplaceable: 2, PendingP50Seconds: 70, PendingP99Seconds: 100,
				NodesLaunched: 40, NodesDisrupted: map[sim.Reason]int{sim.ReasonEmpty: 30, sim.ReasonUnderutilized: 9}, PodsEvicted: 12,
				SavingsPerHour: 6, EvictionsPerDollar: 2, StrandedGPUHours: 50, Utilisation: sim.Utilisation{CPU: .6, Memory: .3, GPU: .9},
				Series: series(10), TypeMix: []sim.TypeUse{{Type: "p3.8xlarge", CapacityType: "spot", Nodes: 4, Hours: 90, CostUSD: 700}, {Type: "g4dn.xlarge", CapacityType: "spot", Nodes: 36, Hours: 2000, CostUSD: 400}}},
			{Policy: sim.PolicyKarpenter, CostUSD: 1900, PodsSubmitted: 2345, PodsStarted: 2338, PodsNeverStarted: 7, PodsUnplaceable: 2, Series: series(20)},
		},
		Bound:       &sim.BoundResult{CostUSD: 1000, StepSeconds: 3600, CostPerHour: []float64{9, 18, 9}},
		Assumptions: []string{"pods <script>alert(1)</script> are escaped"},
		WallSeconds: 1.5,
	}
}

func TestWriteHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, sample()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.HasPrefix(page, "<!doctype html>") || !strings.HasSuffix(page, "</html>\n") {
		t.Errorf("not a whole page")
	}
	if strings.Contains(page, "<script") {
		t.Errorf("the page has a script (or failed to escape one)")
	}
	urls := regexp.MustCompile(`(?i)(src|href)=|url\(|https?://`).FindAllString(page, -1)
	for _, u := range urls {
		if u != "http://" { // the SVG namespace only
			t.Errorf("the page refers to something outside itself: %q", u)
		}
	}
	if n := strings.Count(page, "xmlns=\"http://www.w3.org/2000/svg\""); n != strings.Count(page, "http://") {
		t.Errorf("http:// appears outside SVG namespaces")
	}
	for _, want := range []string{"<svg", "tenon", "karpenter-like", "lower bound", "1.100×", "$1,100", "p3.8xlarge spot", "&lt;test&gt;", "P100", "5 pods that some instance type holds never ran", "Allocated ÷ provisioned GPU"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Cost, $/h, three utilisations, and the type mix of the one policy that launched something.
	if got := strings.Count(page, "<svg"); got != 1+1+3+1 {
		t.Errorf("%d charts, want 6", got)
	}
	if !strings.Contains(page, "nothing launched") {
		t.Errorf("a policy without nodes should say so")
	}
}

func TestWriteJSONRoundTrips(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var back sim.Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Policies) != 2 || back.Policies[0].CostUSD != 1100 || back.Bound.CostUSD != 1000 || back.Policies[0].NodesDisrupted[sim.ReasonEmpty] != 30 {
		t.Errorf("round trip lost data: %+v", back)
	}
}

func TestWriteSummary(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSummary(&b, sample()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"1,234 jobs (2,345 pods) over 3.0 days", "tenon", "$1,100", "1.100×", "1.900×", "bound", "1.2m / 1.7m", "60% 30% 90%",
		"karpenter-like: 5 pods that some instance type holds never ran", "unknown GPU type: 3 (first on line 17", "escaped"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	// tenon's only pods that never ran fit no instance type: its cost stays comparable.
	if strings.Contains(out, "tenon: ") {
		t.Errorf("the summary calls tenon's cost not comparable for pods no instance type holds:\n%s", out)
	}
}

func TestAnIncompleteReplayIsSaidSo(t *testing.T) {
	rep := sample()
	rep.Incomplete = true
	rep.Policies[1].Incomplete, rep.Policies[1].EndHours = true, 12
	var b bytes.Buffer
	if err := WriteSummary(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"INCOMPLETE: the replay was stopped", "karpenter-like: INCOMPLETE, stopped at 12.0 hours of 3.0 days"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "karpenter-like: 5 pods") {
		t.Errorf("an incomplete policy's pods left are not held back:\n%s", b.String())
	}
	var h bytes.Buffer
	if err := WriteHTML(&h, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "Incomplete: the replay was stopped") || !strings.Contains(h.String(), "<b>incomplete</b>, stopped at 12.0 hours") {
		t.Errorf("the page does not say the replay is incomplete")
	}
}
