package sim

import (
	"strings"
	"testing"
)

// Expendable pods in a replay: with only a Deployment of priority -100, the tenon and
// node-groups policies buy nothing (the pods never start), karpenter-like buys nodes for them,
// as Karpenter does. With the cutoff lowered below -100, tenon buys too.
func TestExpendablePodsInAReplay(t *testing.T) {
	set := parseSet(t, poolYAML("m5.large", "m5.xlarge")+`---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: filler}
value: -100
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: filler, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: filler}}
  template:
    metadata: {labels: {app: filler}}
    spec:
      priorityClassName: filler
      containers:
      - {name: c, image: c, resources: {requests: {cpu: "1", memory: 1Gi}}}
`)
	sched, err := ReadSchedule(strings.NewReader("end at 2h\n"))
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
	if !strings.Contains(strings.Join(env.Notes, "\n"), "below the default expendable cutoff -10") {
		t.Errorf("notes: %v", env.Notes)
	}
	rep := simulate(t, env, exact(), PolicyTenon, PolicyKarpenter, PolicyNodeGroup)
	for _, name := range []string{PolicyTenon, PolicyNodeGroup} {
		if p := policy(t, rep, name); p.NodesLaunched != 0 || p.CostUSD != 0 {
			t.Errorf("%s bought %d nodes ($%.3f) for expendable pods; want none", name, p.NodesLaunched, p.CostUSD)
		}
	}
	if p := policy(t, rep, PolicyKarpenter); p.NodesLaunched == 0 {
		t.Errorf("karpenter-like bought nothing; Karpenter provisions for every pending pod")
	}
	opts := exact()
	opts.ExpendablePriorityCutoff = new(int32(-1000))
	if p := policy(t, simulate(t, env, opts, PolicyTenon), PolicyTenon); p.NodesLaunched == 0 {
		t.Errorf("with the cutoff at -1000, tenon bought nothing for pods of priority -100")
	}
}
