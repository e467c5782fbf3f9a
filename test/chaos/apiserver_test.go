package chaos

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// kube-apiserver is restarted (gracefully, then killed) at seeded random points of a scale-up
// while the controller runs: 0.3–2.3 s after the scale-up starts (pods pending and batched),
// and 0.3–2.3 s after its first NodeClaim exists (claims launching). Its watches must resume, and nothing may be done twice: the
// NodeClaims the provisioner creates for the scale-up (karpenter_nodeclaims_created_total, reason provisioned)
// may exceed those of a clean scale-up of the same workload on the same cluster, run first, by
// at most one per NodePool (a batch cut at a different moment may round up once more per
// pool), and the final invariants of TestKillAtRandom hold.
func TestAPIServerRestart(t *testing.T) {
	s := seed(t)
	began := time.Now()
	rng := rand.New(rand.NewPCG(uint64(s), 0x617069))
	pods := max(*flagPods*3/5, 20)
	c := newCluster(t)
	ctl := newController(t, c.cp.KubeconfigPath())
	c.install(nodeClass(), pods)
	w := c.watch()
	ctl.start()
	up := replicas(pods, 1)
	created := func() float64 {
		c.t.Helper()
		var v float64
		c.eventually(30*time.Second, "reading the controller's metrics", func() (bool, string) {
			var err error
			v, err = ctl.metric("karpenter_nodeclaims_created_total", `reason="provisioned"`)
			return err == nil, fmt.Sprint(err)
		})
		return v
	}

	// The clean run, then back to nothing.
	c.converge(total(up), 5*time.Second, 5*time.Minute)
	clean := created()
	cleanNodes := len(c.nodeNamesList())
	zero := map[string]int32{}
	for name := range up {
		zero[name] = 0
	}
	c.scale(zero)
	c.eventually(5*time.Minute, "every node consolidated away", func() (bool, string) {
		ok, msg := c.settled(0)
		n := len(c.nodeNamesList())
		return ok && n == 0, fmt.Sprintf("%d nodes; %s", n, msg)
	})

	// The same scale-up with the API server restarted twice under it.
	before := created()
	c.scale(up)
	restarts := 0
	for i, kill := range []bool{false, true} {
		// The first while the pods are pending and batched; the second once claims exist,
		// while they launch.
		if i == 1 {
			c.eventually(2*time.Minute, "NodeClaims for the second scale-up", func() (bool, string) {
				_, state := c.state(total(up))
				return len(c.nodeClaimNames()) > 0, state
			})
		}
		time.Sleep(time.Duration(300+rng.IntN(2000)) * time.Millisecond)
		_, state := c.state(total(up))
		down := time.Duration(200+rng.IntN(2800)) * time.Millisecond
		if err := c.cp.RestartAPIServer(c.ctx, down, kill); err != nil {
			t.Fatalf("restarting kube-apiserver: %v", err)
		}
		restarts++
		t.Logf("kube-apiserver restart %d (kill=%v, down %v) at: %s", i+1, kill, down, state)
	}
	c.converge(total(up), 5*time.Second, 5*time.Minute)
	again := created() - before
	if again > clean+2 {
		t.Errorf("the provisioner created %v NodeClaims for the scale-up with kube-apiserver restarts, %v for the same scale-up without: something was done twice", again, clean)
	}
	insts, claims := c.final(t, w)
	if crashed := ctl.crashed(); len(crashed) > 0 {
		t.Errorf("the controller exited by itself: %v", crashed)
	}
	r := w.report()
	t.Logf("chaos apiserver: seed %d, %d pods; kube-apiserver restarts %d; NodeClaims created: clean run %v (%d nodes), with restarts %v (%d nodes)",
		s, total(up), restarts, clean, cleanNodes, again, claims)
	t.Logf("chaos apiserver: invariant checks %d samples (%d failed reads, the API server down), peak %d nodes; end: %d instances, %d NodeClaims; duration %v",
		r.samples, r.failed, r.peakNodes, insts, claims, time.Since(began).Round(time.Second))
}

func (c *cluster) nodeClaimNames() []string {
	var l apisv1.NodeClaimList
	_ = c.kube.List(c.ctx, &l)
	out := make([]string, 0, len(l.Items))
	for _, nc := range l.Items {
		out = append(out, nc.Name)
	}
	return out
}
