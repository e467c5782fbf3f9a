package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8sclock "k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/lifecycle"
)

// awsEndpoint is the project's EC2-compatible endpoint served in the test process, behind a
// handler that counts the provider's calls and, while faults are on, injects one of the
// endpoint's own faults (awsapi.Fault, Count 1) before a seeded fraction of them.
type awsEndpoint struct {
	server *awsapi.Server
	url    string

	mu       sync.Mutex
	rng      *rand.Rand
	rate     float64
	on       bool
	calls    int
	injected map[string]int // by kind

	// CreateFleet requests made under faults, the lost-response and access-denied faults
	// injected for them and those faults' indices in the endpoint's list (for their hits).
	fleetCalls, fleetLost, fleetDenied int
	fleetLostAt, fleetDeniedAt         []int
}

// The kinds of fault the endpoint is made to answer with.
var awsFaultKinds = []struct {
	name string
	kind awsapi.FaultKind
}{
	{"throttle", awsapi.FaultThrottle},
	{"5xx", awsapi.FaultServerError},
	{"slow", awsapi.FaultSlow},
	{"lost", awsapi.FaultLostResponse},
	{"denied", awsapi.FaultAccessDenied},
}

// fleetLostRate is the fraction of CreateFleet requests made under faults whose answer is
// lost (twice the fault rate, at most 0.6), instead of the faults other requests draw: a
// launch whose answer never came is the fault that could launch a claim twice. Of the others,
// the fault rate are refused as unauthorized (EC2's UnauthorizedOperation, as when the
// controller's IAM policy lacks ec2:CreateFleet or a condition of it), the one definitive
// error a launch meets that says nothing about capacity: it must fail the launch without
// marking any offering unavailable.
func fleetLostRate(rate float64) float64 { return min(2*rate, 0.6) }

func startAWSEndpoint(t *testing.T, seed int64, rate float64) *awsEndpoint {
	t.Helper()
	server, err := awsapi.New(awsapi.Options{
		Clock:  k8sclock.RealClock{},
		Delays: cloud.Delays{Boot: 300 * time.Millisecond, Registration: 300 * time.Millisecond},
		IDSeed: uint64(seed),
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &awsEndpoint{server: server, rng: rand.New(rand.NewPCG(uint64(seed), 0x617773)), rate: rate, injected: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				server.Sync()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
	})
	e.url = "http://" + ln.Addr().String()
	return e
}

// ServeHTTP counts a call and, while faults are on, draws whether a fault goes before it. The
// fault matches any request, so under concurrent calls it may hit another one than the request
// that drew it: the rate over the run is the same. A CreateFleet request draws instead whether
// its answer is lost (fleetLostRate; the first one under faults always is), with a fault for
// CreateFleet only.
func (e *awsEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, awsapi.ControlPrefix) {
		fleet := isCreateFleet(r)
		e.mu.Lock()
		e.calls++
		switch {
		case e.on && fleet:
			e.fleetCalls++
			if e.fleetLost == 0 || e.rng.Float64() < fleetLostRate(e.rate) {
				e.fleetLostAt = append(e.fleetLostAt, len(e.server.FaultHits()))
				e.server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultLostResponse, Count: 1})
				e.fleetLost++
			} else if e.fleetDenied == 0 || e.rng.Float64() < e.rate {
				e.fleetDeniedAt = append(e.fleetDeniedAt, len(e.server.FaultHits()))
				e.server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultAccessDenied, Count: 1})
				e.fleetDenied++
			}
		case e.on && e.rng.Float64() < e.rate:
			k := awsFaultKinds[e.rng.IntN(len(awsFaultKinds))]
			f := awsapi.Fault{Kind: k.kind, Count: 1}
			if k.kind == awsapi.FaultSlow {
				f.Delay = time.Duration(500+e.rng.IntN(1500)) * time.Millisecond
			}
			e.server.InjectFault(f)
			e.injected[k.name]++
		}
		e.mu.Unlock()
	}
	e.server.ServeHTTP(w, r)
}

// isCreateFleet reads whether an EC2 query request is CreateFleet, leaving its body to be read
// again.
func isCreateFleet(r *http.Request) bool {
	if r.Body == nil || r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "" {
		return false
	}
	b, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return false
	}
	q, err := url.ParseQuery(string(b))
	return err == nil && q.Get("Action") == "CreateFleet"
}

func (e *awsEndpoint) faults(on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.on = on
	if !on {
		e.server.ClearFaults()
	}
}

// summary returns the calls, the faults injected and how many requests they affected, and the
// injections by kind.
func (e *awsEndpoint) summary() (calls, injected, hit int, by string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range e.server.FaultHits() {
		hit += h
	}
	injected += e.fleetLost + e.fleetDenied
	var parts []string
	for _, k := range awsFaultKinds {
		injected += e.injected[k.name]
		parts = append(parts, fmt.Sprintf("%d %s", e.injected[k.name], k.name))
	}
	return e.calls, injected, hit, strings.Join(parts, ", ")
}

// fleetSummary returns the CreateFleet requests made under faults, the lost-answer faults
// injected for them and how many of those met a request, and the same for the access-denied
// faults.
func (e *awsEndpoint) fleetSummary() (calls, lost, lostHit, denied, deniedHit int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	hits := e.server.FaultHits()
	for _, i := range e.fleetLostAt {
		lostHit += hits[i]
	}
	for _, i := range e.fleetDeniedAt {
		deniedHit += hits[i]
	}
	return e.fleetCalls, e.fleetLost, lostHit, e.fleetDenied, deniedHit
}

// live returns the endpoint's pending and running instances by the NodeClaim they are tagged
// for.
func (e *awsEndpoint) live() map[string][]string {
	return liveByClaim(e.server.Instances())
}

func liveByClaim(insts []awsapi.InstanceInfo) map[string][]string {
	out := map[string][]string{}
	for _, in := range insts {
		if in.State == "pending" || in.State == "running" {
			claim := in.Tags["karpenter.sh/nodeclaim"]
			out[claim] = append(out[claim], in.ID)
		}
	}
	return out
}

// awsWatcher samples the endpoint's instances every sampleEvery: no NodeClaim may have two live
// instances at once.
type awsWatcher struct {
	e    *awsEndpoint
	stop context.CancelFunc
	done chan struct{}

	mu         sync.Mutex
	samples    int
	violations []string
	launched   map[string]bool // instance IDs seen
	types      map[string]int  // instances seen by type
}

func (e *awsEndpoint) watch(t *testing.T) *awsWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &awsWatcher{e: e, stop: cancel, done: make(chan struct{}), launched: map[string]bool{}, types: map[string]int{}}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				insts := e.server.Instances()
				live := liveByClaim(insts)
				w.mu.Lock()
				w.samples++
				for _, in := range insts {
					if !w.launched[in.ID] {
						w.launched[in.ID] = true
						w.types[in.Type.Name]++
					}
				}
				for claim, ids := range live {
					if len(ids) > 1 && len(w.violations) < 50 {
						w.violations = append(w.violations, fmt.Sprintf("%s NodeClaim %q has live instances %v",
							time.Now().Format("15:04:05.000"), claim, ids))
					}
				}
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.finish)
	return w
}

func (w *awsWatcher) finish() {
	w.stop()
	<-w.done
}

// ec2NodeClass selects the endpoint's discovery-tagged subnets and security groups and its
// AL2023 images.
func ec2NodeClass() *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: awsv1.EC2NodeClassSpec{
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{awsapi.DiscoveryTag: "tenon"}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{awsapi.DiscoveryTag: "tenon"}}},
			Role:                       "tenon-nodes",
		},
	}
}

// installAWS creates the EC2NodeClass, waits until the controller has resolved it, and creates
// the chaos workload's NodePools (on the EC2NodeClass), PodDisruptionBudget and Deployments.
func (c *cluster) installAWS(pods int) {
	c.t.Helper()
	nc := ec2NodeClass()
	c.create(nc)
	c.eventually(90*time.Second, "EC2NodeClass Ready", func() (bool, string) {
		if err := c.kube.Get(c.ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady), fmt.Sprintf("conditions %+v", nc.Status.Conditions)
	})
	ref := &apisv1.NodeClassReference{Group: awsv1.Group, Kind: awsv1.EC2NodeClassKind, Name: nc.Name}
	general, memory := nodePool(poolGeneral, []string{"c5", "m5"}, budgetGeneral), nodePool(poolMemory, []string{"r5"}, budgetMemory)
	general.Spec.Template.Spec.NodeClassRef, memory.Spec.Template.Spec.NodeClassRef = ref, ref
	minAvailable := intstr.FromString("75%")
	c.create(general, memory, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: pdbName, Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": pdbName}}},
	})
	for _, s := range shapes {
		c.create(deployment(s, replicas(pods, 1)[s.name]))
	}
}

// awsSettled is settled with the endpoint's instances for SimInstances: every wanted pod
// Running, every NodeClaim initialized and not being deleted, no node tainted, no instance
// pending or shutting down, and as many running instances and nodes as claims.
func (c *cluster) awsSettled(e *awsEndpoint, want int) (bool, string) {
	claims, nodes, ok, msg := c.atRest(want)
	if !ok {
		return false, msg
	}
	running := 0
	for _, in := range e.server.Instances() {
		switch in.State {
		case "running":
			running++
		case "terminated":
		default:
			return false, fmt.Sprintf("instance %s is %s", in.ID, in.State)
		}
	}
	if nodes != claims || running != claims {
		return false, fmt.Sprintf("%d claims, %d nodes, %d running instances", claims, nodes, running)
	}
	return true, ""
}

// awsFinal checks the end state: every live instance of the endpoint is tagged for a NodeClaim
// that exists, every claim has exactly one, and as many nodes as claims, none left tainted. It
// returns the numbers of live instances and claims.
func (c *cluster) awsFinal(t *testing.T, e *awsEndpoint) (instances, claims int) {
	t.Helper()
	var cl apisv1.NodeClaimList
	var nodes corev1.NodeList
	if err := c.kube.List(c.ctx, &cl); err != nil {
		t.Fatal(err)
	}
	if err := c.kube.List(c.ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	live := e.live()
	for _, ids := range live {
		instances += len(ids)
	}
	checkFleet(t, live, cl.Items, nodes.Items)
	return instances, len(cl.Items)
}

// iceOfferings draws the on-demand offerings the endpoint reports InsufficientInstanceCapacity
// for: one of the general pool's small c5 types in every zone (the solver launches the cheapest
// fit, and c5 is cheaper than m5, so those are tried), and three single offerings of others.
func iceOfferings(rng *rand.Rand, zones []string) map[string]bool {
	types := []string{"c5.large", "c5.xlarge", "c5.2xlarge", "m5.large", "m5.xlarge", "r5.large"}
	out := map[string]bool{}
	whole := types[rng.IntN(3)]
	for _, z := range zones {
		out[whole+"/"+z+"/"+apisv1.CapacityTypeOnDemand] = true
	}
	for n := len(out) + 3; len(out) < n; {
		out[types[rng.IntN(len(types))]+"/"+zones[rng.IntN(len(zones))]+"/"+apisv1.CapacityTypeOnDemand] = true
	}
	return out
}

// TestCloudFaults through the AWS front door: the controller runs with --cloud-provider aws
// against the project's EC2-compatible endpoint, served in the test process, whose kubelet
// registers the instances' Nodes. Through a scale-up and a scale-down, a seeded fraction of
// the provider's calls (every service: EC2, IAM, SSM, Pricing) meet one of the endpoint's own
// faults (throttling, internal error, a slow answer, an answer lost after the request was
// served), a seeded fraction of the CreateFleet calls (the first one always) launch and lose
// their answer, and seeded offerings (one type in every
// zone, and three more) report InsufficientInstanceCapacity; then the faults stop, the offerings have capacity again, the
// controller is restarted (it forgets its unavailable offerings) and the cluster converges. At
// every sample (every 200 ms) no NodeClaim has two live (pending or running) instances on the
// endpoint, nor does any NodePool exceed its disruption budget or any PodDisruptionBudget break;
// at the end every live instance belongs to an existing NodeClaim, every pod runs, and every
// InsufficientCapacity event names only offerings the test made ICE.
func TestAWSCloudFaults(t *testing.T) {
	s := seed(t)
	began := time.Now()
	rng := rand.New(rand.NewPCG(uint64(s), 0x696365))
	pods := max(*flagPods/2, 20)
	c := newCluster(t)
	e := startAWSEndpoint(t, s, *flagFault)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctl := newController(t, c.cp.KubeconfigPath(), "--cloud-provider=aws", "--aws-endpoint-url="+e.url,
		"--aws-region="+e.server.Region(), "--cluster-name=tenon")
	kubelet := &awsapi.Kubelet{Server: e.server, Client: c.kube, Resync: 200 * time.Millisecond}
	go func() { _ = kubelet.Start(c.ctx) }()

	cat, err := catalog.Load(catalog.DefaultRegion)
	if err != nil {
		t.Fatal(err)
	}
	var zones []string
	for _, z := range cat.Zones {
		zones = append(zones, z.Name)
	}
	ice := iceOfferings(rng, zones)
	setICE := func(on bool) {
		for o := range ice {
			p := strings.Split(o, "/")
			e.server.SetInsufficientCapacity(p[0], p[1], p[2], on)
		}
	}
	setICE(true)

	ctl.start()
	c.installAWS(pods) // waits for the EC2NodeClass, resolved without faults
	w := c.watch()     // budgets and PodDisruptionBudgets (it finds no SimInstances here)
	aw := e.watch(t)
	e.faults(true)

	up := replicas(pods, 1)
	time.Sleep(30 * time.Second) // the scale-up under faults and ICE
	t.Logf("after the scale-up under faults: %s", c.awsState(e, total(up)))
	down := replicas(pods, 0.3)
	c.scale(down)
	time.Sleep(15 * time.Second) // the scale-down and consolidation under faults
	t.Logf("after the scale-down under faults: %s", c.awsState(e, total(down)))
	iceMetric := metricOrNone(ctl, `reason="insufficient_capacity"`)
	gaugeMarked, err := unavailableByGauge(ctl)
	if err != nil {
		t.Errorf("reading the offering-available gauge: %v", err)
	}
	for _, o := range gaugeMarked {
		if !ice[o] {
			t.Errorf("karpenter_cloudprovider_instance_type_offering_available is 0 for %s, which the test did not make ICE", o)
		}
	}
	errMetric := metricOrNone(ctl, `reason="error"`)
	calls, injected, hit, by := e.summary()
	fleetCalls, fleetLost, fleetLostHit, fleetDenied, fleetDeniedHit := e.fleetSummary()
	e.faults(false)
	setICE(false)
	ctl.kill()
	ctl.start()
	c.convergeWhen(func() (bool, string) { return c.awsSettled(e, total(down)) }, 15*time.Second, 5*time.Minute)
	insts, claims := c.awsFinal(t, e)

	w.finish()
	r := w.report()
	for _, v := range r.violations {
		t.Errorf("invariant broken at a sample: %s", v)
	}
	aw.finish()
	for _, v := range aw.violations {
		t.Errorf("invariant broken at a sample: %s", v)
	}
	if aw.samples == 0 {
		t.Errorf("the instance watcher made no sample")
	}

	var events corev1.EventList
	if err := c.kube.List(c.ctx, &events); err != nil {
		t.Fatal(err)
	}
	marked, launchFailed := map[string]bool{}, 0
	for _, ev := range events.Items {
		switch ev.Reason {
		case lifecycle.ReasonLaunchFailed:
			launchFailed += int(ev.Count)
		case lifecycle.ReasonInsufficientCapacity:
			offerings, err := markedOfferings(ev.Message)
			if err != nil {
				t.Errorf("event %s: %v", ev.Name, err)
				continue
			}
			for _, o := range offerings {
				marked[o] = true
				if !ice[o] {
					t.Errorf("offering %s marked unavailable, but the test did not make it ICE: event %q", o, ev.Message)
				}
			}
		}
	}
	if injected == 0 {
		t.Errorf("no fault was injected in %d calls", calls)
	}
	if fleetLostHit == 0 {
		t.Errorf("no CreateFleet answer was lost (%d CreateFleet calls under faults, %d lost-answer faults injected)", fleetCalls, fleetLost)
	}
	if fleetDeniedHit == 0 {
		t.Errorf("no CreateFleet was refused as unauthorized (%d CreateFleet calls under faults, %d access-denied faults injected)", fleetCalls, fleetDenied)
	}
	if crashed := ctl.crashed(); len(crashed) > 0 {
		t.Errorf("the controller exited by itself: %v", crashed)
	}
	iceList := make([]string, 0, len(ice))
	for o := range ice {
		iceList = append(iceList, o)
	}
	sort.Strings(iceList)
	t.Logf("chaos aws faults: seed %d, %d pods up then %d; ICE offerings %v; endpoint calls %d, faults injected %d (%s, %d lost CreateFleet, %d denied CreateFleet), requests hit %d",
		s, total(up), total(down), iceList, calls, injected, by, fleetLost, fleetDenied, hit)
	t.Logf("chaos aws faults: CreateFleet under faults %d calls, %d answers lost (served, then a 500), %d refused (UnauthorizedOperation)", fleetCalls, fleetLostHit, fleetDeniedHit)
	var types []string
	for typ, n := range aw.types {
		types = append(types, fmt.Sprintf("%s×%d", typ, n))
	}
	sort.Strings(types)
	t.Logf("chaos aws faults: %d instances launched over the run: %s", len(aw.launched), strings.Join(types, " "))
	t.Logf("chaos aws faults: launch failures (metric) %s insufficient_capacity, %v error; events: %d LaunchFailed, %d offerings marked unavailable; offering-available gauge 0 for %d (all ICE by the test)",
		iceMetric, errMetric, launchFailed, len(marked), len(gaugeMarked))
	t.Logf("chaos aws faults: invariant checks %d instance samples, %d cluster samples (%d failed reads), peak %d nodes; end: %d live instances, %d NodeClaims; duration %v",
		aw.samples, r.samples, r.failed, r.peakNodes, insts, claims, time.Since(began).Round(time.Second))
}

func (c *cluster) awsState(e *awsEndpoint, want int) string {
	if ok, s := c.awsSettled(e, want); !ok {
		return s
	}
	return "settled"
}

// metricOrNone is the launch-failure counter's samples matching label, or "none" while the
// vector has none.
func metricOrNone(ctl *controller, label string) string {
	v, err := ctl.metric("tenon_nodeclaims_launch_failures_total", label)
	if err != nil {
		return "none"
	}
	return fmt.Sprint(v)
}

// offeringLabels reads the labels of a karpenter_cloudprovider_instance_type_offering_available
// sample.
var offeringLabels = regexp.MustCompile(`(instance_type|capacity_type|zone)="([^"]*)"`)

// unavailableByGauge returns the offerings (TYPE/ZONE/CAPACITY-TYPE) the controller's
// karpenter_cloudprovider_instance_type_offering_available holds at 0, sorted.
func unavailableByGauge(ctl *controller) ([]string, error) {
	const name = "karpenter_cloudprovider_instance_type_offering_available"
	ctl.mu.Lock()
	addr := ctl.metrics
	ctl.mu.Unlock()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		f := strings.Fields(line)
		if f[len(f)-1] != "0" {
			continue
		}
		l := map[string]string{}
		for _, m := range offeringLabels.FindAllStringSubmatch(line, -1) {
			l[m[1]] = m[2]
		}
		if len(l) != 3 {
			return nil, fmt.Errorf("cannot read %q", line)
		}
		out = append(out, l["instance_type"]+"/"+l["zone"]+"/"+l["capacity_type"])
	}
	sort.Strings(out)
	return out, nil
}
