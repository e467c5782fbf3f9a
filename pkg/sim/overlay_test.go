package sim

import (
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/manifest"
)

// tenon simulate does not apply NodeOverlays yet; it says so rather than ignore them.
func TestNodeOverlaysAreNamedInTheNotes(t *testing.T) {
	set, err := manifest.Parse("overlay.yaml", []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.tenon.sh, kind: SimNodeClass, name: default}
      requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: discount}
spec:
  priceAdjustment: "-10%"
`))
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(set, &Workload{}, EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(env.Notes, "\n"), "NodeOverlay discount is not applied") {
		t.Fatalf("notes: %v", env.Notes)
	}
}
