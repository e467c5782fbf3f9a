package chaos

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// killer SIGKILLs the controller at seeded random moments and restarts it after a seeded random
// delay, recording where each kill landed.
type killer struct {
	t      *testing.T
	c      *cluster
	ctl    *controller
	rng    *rand.Rand
	points []point
}

// point is one kill: where it landed, and the nodes that existed then.
type point struct {
	phase string
	busy  bool
	state string
	nodes []string
}

// run kills the controller n times: each incarnation lives a random 0.3s to maxUp (it takes
// about a second to sync its caches, so some kills land before it acts, most while it acts),
// stays dead a random 0.1–2s, and is started again.
func (k *killer) run(phase string, n int, maxUp time.Duration, busy func() (bool, string)) {
	for range n {
		time.Sleep(300*time.Millisecond + time.Duration(k.rng.Int64N(int64(maxUp-300*time.Millisecond))))
		b, state := busy()
		nodes := k.c.nodeNamesList()
		k.ctl.kill()
		k.points = append(k.points, point{phase: phase, busy: b, state: state, nodes: nodes})
		time.Sleep(time.Duration(100+k.rng.IntN(1900)) * time.Millisecond)
		k.ctl.start()
	}
}

// midway counts the kills of phase that landed while it had work left: the cluster was busy,
// or a node that existed at the kill is gone at the end (consolidation had yet to remove it).
func (k *killer) midway(phase string) int {
	end := map[string]bool{}
	for _, n := range k.c.nodeNamesList() {
		end[n] = true
	}
	count := 0
	for i := range k.points {
		p := &k.points[i]
		if p.phase != phase {
			continue
		}
		for _, n := range p.nodes {
			if !end[n] {
				p.busy = true
			}
		}
		if p.busy {
			count++
		}
	}
	return count
}

// state describes the cluster in a line, and whether the phase still has work: pods not all
// Running, claims being deleted or not initialized, or nodes tainted disrupted.
func (c *cluster) state(want int) (bool, string) {
	run, all, _ := c.running()
	var claims apisv1.NodeClaimList
	var nodes corev1.NodeList
	_ = c.kube.List(c.ctx, &claims)
	_ = c.kube.List(c.ctx, &nodes)
	deleting, uninit, taints := 0, 0, 0
	for _, nc := range claims.Items {
		if nc.DeletionTimestamp != nil {
			deleting++
		} else if !nc.IsTrue(apisv1.ConditionTypeInitialized) {
			uninit++
		}
	}
	for _, n := range nodes.Items {
		if tainted(&n) {
			taints++
		}
	}
	busy := run != want || all != want || deleting > 0 || uninit > 0 || taints > 0
	return busy, fmt.Sprintf("pods %d/%d Running (want %d), %d claims (%d deleting, %d launching), %d nodes (%d tainted)",
		run, all, want, len(claims.Items), deleting, uninit, len(nodes.Items), taints)
}

// The controller process is SIGKILLed at random points of a scale-up of -chaos.pods pods and
// of the consolidation that follows scaling the workload down to 30%, and restarted each time.
// At the end no instance leaked, none was launched twice, every pod runs, no node is left
// tainted, and at no sample was a NodePool budget or a PodDisruptionBudget exceeded.
func TestKillAtRandom(t *testing.T) {
	s := seed(t)
	began := time.Now()
	rng := rand.New(rand.NewPCG(uint64(s), 0x6b696c6c))
	pods, kills := *flagPods, *flagKills
	c := newCluster(t)
	ctl := newController(t, c.cp.KubeconfigPath())
	c.install(nodeClass(), pods)
	w := c.watch()
	ctl.start()
	k := &killer{t: t, c: c, ctl: ctl, rng: rng}

	up := replicas(pods, 1)
	upKills := kills / 2
	k.run("scale-up", upKills, 4*time.Second, func() (bool, string) { return c.state(total(up)) })
	c.converge(total(up), 10*time.Second, settleTime(pods))
	duringUp := k.midway("scale-up")
	peakUp := len(c.nodeNamesList())
	t.Logf("scale-up converged after %v: %d pods on %d nodes", time.Since(began).Round(time.Second), total(up), peakUp)

	down := replicas(pods, 0.3)
	c.scale(down)
	k.run("consolidation", kills-upKills, 8*time.Second, func() (bool, string) { return c.state(total(down)) })
	c.converge(total(down), 15*time.Second, settleTime(pods))
	duringDown := k.midway("consolidation")

	insts, claims := c.final(t, w)
	for i, p := range k.points {
		t.Logf("%s kill %d (work left: %v): %s", p.phase, i+1, p.busy, p.state)
	}
	if crashed := ctl.crashed(); len(crashed) > 0 {
		t.Errorf("the controller exited by itself: %v", crashed)
	}
	r := w.report()
	t.Logf("chaos kill: seed %d, %d pods up then %d; points killed %d (%d mid scale-up, %d mid consolidation), restarts %d",
		s, total(up), total(down), ctl.kills, duringUp, duringDown, ctl.starts-1)
	t.Logf("chaos kill: invariant checks %d samples (%d failed reads), peak %d nodes; end: %d instances, %d NodeClaims, %d nodes after scale-up; duration %v",
		r.samples, r.failed, r.peakNodes, insts, claims, peakUp, time.Since(began).Round(time.Second))
}

// settleTime is how long a phase of a run of pods may take to converge: 6 minutes at CI's size,
// and 250 ms more a pod above it (about 14 minutes at 2,000 pods on 2 loaded cores; a first 2,000-pod run, under load, had 1,997 of its pods Running after 11).
func settleTime(pods int) time.Duration {
	return 6*time.Minute + time.Duration(max(0, pods-60))*250*time.Millisecond
}

func (c *cluster) nodeNamesList() []string {
	var nodes corev1.NodeList
	_ = c.kube.List(c.ctx, &nodes)
	out := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		out = append(out, n.Name)
	}
	return out
}
