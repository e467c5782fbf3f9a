package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const planNodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.tenon.sh, kind: SimNodeClass, name: default}
      requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
`

func writeManifest(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPlanAndSimulateRefuseATypoedKind: a misspelt kind of a group tenon reads used to give an
// empty plan and exit 0.
func TestPlanAndSimulateRefuseATypoedKind(t *testing.T) {
	path := writeManifest(t, planNodePool+`---
apiVersion: apps/v1
kind: Deploymnet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
`)
	for _, args := range [][]string{{"plan", "-f", path}, {"simulate", "-f", path, "--out", ""}} {
		out, err := runTenon(t, args...)
		if err == nil || !strings.Contains(err.Error(), `m.yaml:11: document 2 (Deploymnet web): kind: Invalid value: "Deploymnet": no kind "Deploymnet" in apps/v1 (did you mean "Deployment"?)`) {
			t.Errorf("tenon %s: error %v; want the typo named at its line\n%s", args[0], err, out)
		}
	}
}

// TestPlanNamesIgnoredKindsOnceEach: kinds tenon plan does not read are named on standard
// error, once per kind, and the plan is made.
func TestPlanNamesIgnoredKindsOnceEach(t *testing.T) {
	path := writeManifest(t, planNodePool+`---
apiVersion: v1
kind: Service
metadata: {name: a}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: b}
spec: {ports: [{port: 80}]}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
`)
	out, err := runTenon(t, "plan", "-f", path)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"tenon plan: ignored Service (v1): 2 objects, the first at " + path + ":10 (given with -f); tenon plan does not read this kind\n",
		"tenon plan: ignored Widget (example.com/v1): 1 object, the first at " + path + ":20 (given with -f)",
		"1 new nodes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "ignored Service"); n != 1 {
		t.Errorf("Service named %d times, want once", n)
	}
}
