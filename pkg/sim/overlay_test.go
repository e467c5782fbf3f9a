package sim

import (
	"strings"
	"testing"
)

const c5Overlay = `
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: c5-dear}
spec:
  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [c5.large]}]
  price: "1"
`

// NodeOverlays apply in tenon simulate as in the controller: every policy plans with the
// overlaid prices, and nodes are billed at them. c5.large is cheaper than m5.large; priced at
// $1/h by an overlay, no policy buys it.
func TestNodeOverlaysPriceTheSimulation(t *testing.T) {
	rows := "0,3600,1,1500,1024,0,\n"
	for _, c := range []struct {
		name     string
		overlays string
		perHour  float64 // what the one node costs
	}{
		{"without", "", 0.085},
		{"with", c5Overlay, 0.096},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := traceEnv(t, parseSet(t, poolYAML("m5.large", "c5.large")+c.overlays), rows)
			rep := simulate(t, env, exact())
			for _, p := range rep.Policies {
				if p.CostUSD < c.perHour*0.99 || p.CostUSD > c.perHour*1.1 {
					t.Errorf("%s: cost $%.4f for one hour of one node; want about $%.3f", p.Policy, p.CostUSD, c.perHour)
				}
			}
			if c.overlays != "" && !strings.Contains(strings.Join(env.Notes, "\n"), "1 NodeOverlay(s) applied") {
				t.Errorf("notes: %v", env.Notes)
			}
		})
	}
}

// An overlay that does not apply is named in the notes with the reason.
func TestInvalidNodeOverlaysAreNamedInTheNotes(t *testing.T) {
	set := parseSet(t, poolYAML("m5.large")+`
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: negative}
spec:
  capacity: {example.com/widget: "-1"}
`)
	env, err := NewEnv(set, &Workload{}, EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(env.Notes, "\n"), "nodeoverlay negative is not applied") {
		t.Fatalf("notes: %v", env.Notes)
	}
}
