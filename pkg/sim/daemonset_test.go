package sim

import (
	"strings"
	"testing"
)

// TestSimulationSurvivesDaemonSetsThatOverfillSomeTypes: a 2.5-cpu DaemonSet does not fit an
// m5.large. Every policy still runs the workload on the larger types, and the bound (whose
// m5.large has negative room) stays a floor under each.
func TestSimulationSurvivesDaemonSetsThatOverfillSomeTypes(t *testing.T) {
	set := parseSet(t, poolYAML("m5.large", "m5.xlarge", "m5.2xlarge")+`---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - {name: agent, image: agent, resources: {requests: {cpu: 2500m, memory: 256Mi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: web, resources: {requests: {cpu: "1", memory: 1Gi}}}
`)
	sched, err := ReadSchedule(strings.NewReader("deployment web replicas 1 at 1h\nend at 2h\n"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := ScheduleWorkload(set, sched, 0)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(set, w, EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep := simulate(t, env, exact())
	if rep.Bound.CostUSD <= 0 {
		t.Fatalf("bound $%.3f", rep.Bound.CostUSD)
	}
	for _, p := range rep.Policies {
		if p.PodsNeverStarted > 0 || p.CostUSD < rep.Bound.CostUSD-1e-9 {
			t.Errorf("%s: %d pods never ran, $%.3f (bound $%.3f)", p.Policy, p.PodsNeverStarted, p.CostUSD, rep.Bound.CostUSD)
		}
	}
}
