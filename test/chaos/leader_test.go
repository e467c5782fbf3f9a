package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The leader election's timings in TestLeaderHandOver: short, so that a hand-over takes
// seconds, and in the order client-go requires (lease > renew deadline > 1.2 retry periods).
// A renew deadline of 3 s was too short on the loaded 2-core machine: a new leader busy with
// its first batches missed it and gave up leading (the process exits then, as controller-runtime
// makes it), leaving nobody to lead.
const (
	leaseDuration = 8 * time.Second
	renewDeadline = 6 * time.Second
	retryPeriod   = time.Second
	leaseName     = "tenon-leader"
)

// takeoverBound is the longest a standby may take, from the leader's SIGKILL, to lead: the
// leader last renewed before it died; the standby notices a renewal up to 2.2 retry periods
// late (client-go waits a retry period plus a jitter of up to 1.2 of it: wait.Jitter with
// leaderelection.JitterFactor), counts the lease duration from then, and tries again at most
// 2.2 retry periods after the lease lapsed; each of those waits starts
// only once the previous try's Lease read and write have returned (client-go's sliding retry),
// and the scrape that sees it lead runs every 100 ms: a second for those on a loaded machine.
const takeoverBound = leaseDuration + 2*retryPeriod*22/10 + time.Second

// leaderArgs run a controller with leader election on, its Lease in the default namespace.
func leaderArgs() []string {
	return []string{
		"--leader-elect=true",
		"--leader-election-namespace=default",
		"--leader-elect-lease-duration=" + leaseDuration.String(),
		"--leader-elect-renew-deadline=" + renewDeadline.String(),
		"--leader-elect-retry-period=" + retryPeriod.String(),
	}
}

// acting are the metrics that move only when a controller acts on the cluster or the cloud:
// NodeClaims the provisioner created, and the cloud provider's launches and terminations. A
// process that has not acted yet shows no sample of them, which reads as 0; the test checks
// at the end that the first (NodeClaims created) was read from the leaders, so a misspelt or
// renamed metric cannot pass for a standby that never acts.
var acting = [][]string{
	{"karpenter_nodeclaims_created_total"},
	{"karpenter_cloudprovider_duration_seconds_count", `method="Create"`},
	{"karpenter_cloudprovider_duration_seconds_count", `method="Delete"`},
}

// role is what one scrape of a controller process said.
type role struct {
	leader bool
	acted  float64
	// claims is the first of the acting metrics, NodeClaims created.
	claims float64
}

// scrapeRole reads both from one scrape of c's metrics.
func scrapeRole(c *controller) (role, error) {
	c.mu.Lock()
	addr := c.metrics
	c.mu.Unlock()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return role{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return role{}, err
	}
	lead, err := sumMetric(bytes.NewReader(body), "leader_election_master_status", `name="`+leaseName+`"`)
	if err != nil {
		return role{}, err
	}
	r := role{leader: lead == 1}
	for i, m := range acting {
		v, err := sumMetric(bytes.NewReader(body), m[0], m[1:]...)
		if err != nil && !errors.Is(err, errNoSample) {
			return role{}, err
		}
		r.acted += v
		if i == 0 {
			r.claims = v
		}
	}
	return r, nil
}

// roles scrapes both controllers every 100 ms until stopped and checks, at every scrape, that
// they do not both lead and that one that does not lead has never acted.
type roles struct {
	a, b *controller

	mu         sync.Mutex
	scrapes    int
	violations []string
	last       map[*controller]role
}

func (r *roles) run(stop <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		got := map[*controller]role{}
		for _, c := range []*controller{r.a, r.b} {
			c.mu.Lock()
			alive := c.cmd != nil
			c.mu.Unlock()
			if !alive {
				continue
			}
			if ro, err := scrapeRole(c); err == nil {
				got[c] = ro
			}
		}
		r.mu.Lock()
		r.scrapes++
		if ga, gb := got[r.a], got[r.b]; ga.leader && gb.leader {
			r.violate("both controllers lead")
		}
		for c, ro := range got {
			// One scrape may catch a standby between taking the lease and the gauge's
			// collection, so a standby that has acted is a violation when the next scrape
			// still finds it not leading.
			if prev, ok := r.last[c]; ok && !prev.leader && prev.acted > 0 && !ro.leader {
				r.violate("a controller that does not lead has acted (%v NodeClaims created, launches and terminations)", ro.acted)
			}
			r.last[c] = ro
		}
		r.mu.Unlock()
	}
}

func (r *roles) violate(format string, args ...any) {
	if len(r.violations) < 20 {
		r.violations = append(r.violations, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
	}
}

func (r *roles) get(c *controller) role {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[c]
}

// Two `tenon controller` processes run with leader election on (an 8 s lease). Once the first
// leads and has created a NodeClaim of the scale-up, the second starts as a standby; the leader
// is SIGKILLed a seeded 0–1.5 s later, mid scale-up, and a pod that fits no node of the
// workload's arrives. The standby takes the lease within takeoverBound of the kill, finishes
// the scale-up and provisions that pod. At every scrape (100 ms) the two never
// both lead and the one that does not lead has created no NodeClaim and launched or terminated
// no instance; at every watcher sample no claim has two live instances; at the end no instance
// leaked and every pod runs.
func TestLeaderHandOver(t *testing.T) {
	s := seed(t)
	began := time.Now()
	rng := rand.New(rand.NewPCG(uint64(s), 0x6c656164))
	pods := max(*flagPods*3/5, 20)
	c := newCluster(t)
	a := newController(t, c.cp.KubeconfigPath(), leaderArgs()...)
	b := newController(t, c.cp.KubeconfigPath(), leaderArgs()...)
	c.install(nodeClass(), pods)
	w := c.watch()
	r := &roles{a: a, b: b, last: map[*controller]role{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.run(stop) })
	stopRoles := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopRoles)

	a.start()
	c.eventually(2*time.Minute, "the first controller leading", func() (bool, string) {
		return r.get(a).leader, "not yet"
	})
	b.start()
	c.eventually(2*time.Minute, "the first controller creating a NodeClaim and the standby serving metrics", func() (bool, string) {
		_, err := b.metric("leader_election_master_status")
		return r.get(a).acted > 0 && err == nil, fmt.Sprintf("leader acted %v; standby metrics: %v", r.get(a).acted, err)
	})
	time.Sleep(time.Duration(rng.Int64N(int64(1500 * time.Millisecond))))
	_, state := c.state(total(replicas(pods, 1)))
	beforeKill := r.get(a)
	if r.get(b).leader {
		t.Fatal("the standby leads while the first controller is alive")
	}
	a.kill()
	killed := time.Now()
	// Demand that arrives while nobody leads, and that only a new node can serve: whatever the
	// first leader finished before its kill, the new one has a NodeClaim to create.
	c.create(loner())
	var takeover time.Duration
	for {
		ro, err := scrapeRole(b)
		if err == nil && ro.leader {
			takeover = time.Since(killed)
			break
		}
		if time.Since(killed) > time.Minute {
			t.Fatalf("the standby did not take over within a minute of the leader's kill: %+v %v", ro, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if takeover > takeoverBound {
		t.Errorf("the standby took over %v after the leader was killed; the lease (%v, retry period %v) bounds it at %v",
			takeover.Round(10*time.Millisecond), leaseDuration, retryPeriod, takeoverBound)
	}

	want := total(replicas(pods, 1)) + 1
	c.converge(want, 10*time.Second, 6*time.Minute)
	insts, claims := c.final(t, w)
	stopRoles()
	after := r.get(b)
	var lease coordinationv1.Lease
	transitions := int32(-1)
	if err := c.kube.Get(c.ctx, client.ObjectKey{Namespace: "default", Name: leaseName}, &lease); err == nil && lease.Spec.LeaseTransitions != nil {
		transitions = *lease.Spec.LeaseTransitions
	}
	if beforeKill.claims == 0 && after.claims == 0 {
		t.Errorf("neither leader's scrapes held a sample of %v: the metric is not what the controller exports", acting[0])
	}
	if after.acted == 0 {
		t.Errorf("the new leader never acted: it did not provision the pod that arrived during the hand-over")
	}
	if transitions < 1 {
		t.Errorf("the Lease records %d transitions, want at least 1", transitions)
	}
	for _, v := range r.violations {
		t.Errorf("leader invariant broken at a scrape: %s", v)
	}
	for _, ctl := range []*controller{a, b} {
		if crashed := ctl.crashed(); len(crashed) > 0 {
			t.Errorf("a controller exited by itself: %v", crashed)
		}
	}
	wr := w.report()
	t.Logf("at the kill: %s", state)
	t.Logf("chaos leader: seed %d, %d pods; lease %v, renew deadline %v, retry period %v; leader killed with %v actions done; standby took over in %v (bound %v), lease transitions %d",
		s, want, leaseDuration, renewDeadline, retryPeriod, beforeKill.acted, takeover.Round(10*time.Millisecond), takeoverBound, transitions)
	t.Logf("chaos leader: %d role scrapes (never two leaders, no action by a standby), new leader's actions %v; invariant checks %d samples (%d failed reads), peak %d nodes; end: %d instances, %d NodeClaims; duration %v",
		r.scrapes, after.acted, wr.samples, wr.failed, wr.peakNodes, insts, claims, time.Since(began).Round(time.Second))
}

// loner is one pod that shares no node with the workload's pods (a required anti-affinity
// to all of them), so that no node bought for the workload can hold it.
func loner() *appsv1.Deployment {
	d := deployment(shape{name: "loner", cpu: "500m", mem: "512Mi", pool: poolGeneral}, 1)
	var apps []string
	for _, s := range shapes {
		apps = append(apps, s.name)
	}
	d.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: apps},
			}},
		}},
	}}
	return d
}
