package disruption

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/solverinput"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/featuregates"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Builder reads a disruption snapshot from the cluster mirror and the cloud provider: every
// node tenon manages with its price, age, state and drift, the solver's view of the cluster
// and the pending backlog the provisioner would plan for now. It is safe for concurrent use.
type Builder struct {
	src   *solverinput.Source
	clock clock.PassiveClock
	// driftTTL is how long the provider's drift verdict on a claim is reused.
	driftTTL time.Duration
	// static (the StaticCapacity gate) lets drift and expiration replace static NodePools'
	// nodes; without it they are excluded.
	static bool

	mu    sync.Mutex
	drift map[types.UID]driftVerdict
}

type driftVerdict struct {
	reason cloudprovider.DriftReason
	at     time.Time
}

// View is one disruption snapshot with the objects it was read from.
type View struct {
	Snapshot *disruption.Snapshot
	// Nodes and Claims are the objects behind Snapshot.Nodes, by the name of the entry (a
	// node's name; a claim's name for a claim being deleted whose node is gone, which has no
	// entry in Nodes).
	Nodes  map[string]*corev1.Node
	Claims map[string]*apisv1.NodeClaim
	// Excluded are nodes left out of Snapshot.Nodes, and why (not tenon's, in a static
	// nodepool, backing off after a failed command).
	Excluded map[string]string
	// PriceUnknown lists the entries whose offering was not found among their nodepool's
	// instance types (their Price is 0, so consolidation never counts on removing them).
	PriceUnknown map[string]bool
	// DriftReasons are the reasons (NodePoolDrifted, RequirementsDrifted, or the cloud
	// provider's) of the entries whose Drifted is set, for the NodeClaim's Drifted condition.
	DriftReasons map[string]string

	solver *solverinput.View
	index  map[string]int // entry name → index in Snapshot.Nodes
	// nominatedTo are the nodes pending pods are nominated to: kube-scheduler keeps their room
	// there, so they are left alone as nominated nodes are.
	nominatedTo map[string]bool
}

// Node returns the snapshot entry called name.
func (v *View) Node(name string) (*disruption.Node, bool) {
	i, ok := v.index[name]
	if !ok {
		return nil, false
	}
	return &v.Snapshot.Nodes[i], true
}

// BuildOptions say what the controller knows beyond the mirror.
type BuildOptions struct {
	// Busy nodes belong to commands already running: they are reported as being deleted, so
	// that they count against budgets and are no candidates.
	Busy map[string]bool
	// Held nodes are left out of the candidates, with the reason given.
	Held map[string]string
}

// Build reads one snapshot. An error naming what could not be read (a NodePool whose NodeClass
// is not ready, an object that does not convert) is returned with the view of the rest.
func (b *Builder) Build(ctx context.Context, o BuildOptions) (*View, error) {
	now := b.clock.Now()
	cluster := b.src.Cluster
	pools := b.src.Pools()
	sv, err := b.src.Snapshot(ctx, pools)
	// The provisioner reports the pods it cannot plan for; expendable pods take no room.
	pending, _, _ := b.src.Pending(ctx, pools)
	sv.Snapshot.Pods = pending
	// The claims of the pending pods, and of the running ones as the simulation moves them: a
	// claim generated from a template moves with its pod's replacement, a named claim pins its
	// pods to the node it is allocated on.
	if derr := b.src.Devices(ctx, sv.Snapshot, true); derr != nil {
		err = errors.Join(err, derr)
	}

	v := &View{
		Snapshot: &disruption.Snapshot{Solver: sv.Snapshot, NodePools: map[string]*apisv1.NodePool{}, PDBs: cluster.PDBs(), Now: now, WholeGroups: cluster.WholeGroups()},
		Nodes:    map[string]*corev1.Node{}, Claims: map[string]*apisv1.NodeClaim{},
		Excluded: map[string]string{}, PriceUnknown: map[string]bool{}, DriftReasons: map[string]string{},
		solver: sv, index: map[string]int{}, nominatedTo: cluster.NominatedNodes(),
	}
	static := map[string]bool{} // static NodePools whose nodes are excluded (the gate is off)
	policy := map[string]*poolPolicy{}
	for _, np := range cluster.NodePools() {
		if !cloudprovider.IsManagedNodePool(b.src.Cloud, np) {
			continue // another autoscaler's; its nodes are excluded below
		}
		if np.IsStatic() {
			if !b.static {
				static[np.Name] = true
				continue
			}
			if serr := b.staticClaim(ctx, np, v); serr != nil {
				err = errors.Join(err, serr)
			}
		}
		v.Snapshot.NodePools[np.Name] = np
		reqs, rerr := snapshot.Requirements(np.Spec.Template.Spec.Requirements)
		policy[np.Name] = &poolPolicy{hash: np.Hash(), reqs: reqs, reqsErr: rerr}
	}

	claims := cluster.NodeClaims()
	byProviderID := map[string]*apisv1.NodeClaim{}
	for _, nc := range claims {
		if id := nc.Status.ProviderID; id != "" {
			if prev, ok := byProviderID[id]; !ok || nc.CreationTimestamp.Before(&prev.CreationTimestamp) {
				byProviderID[id] = nc
			}
		}
	}
	registered := map[string]bool{} // claims with a node
	seen := map[types.UID]bool{}
	add := func(n disruption.Node) {
		v.index[n.Name] = len(v.Snapshot.Nodes)
		v.Snapshot.Nodes = append(v.Snapshot.Nodes, n)
	}
	for _, node := range cluster.Nodes() {
		nc := byProviderID[node.Spec.ProviderID]
		if node.Spec.ProviderID == "" || nc == nil {
			v.Excluded[node.Name] = "it has no NodeClaim: tenon does not manage it"
			continue
		}
		registered[nc.Name] = true
		pool := nc.Labels[apisv1.NodePoolLabelKey]
		switch {
		case !cloudprovider.IsManaged(b.src.Cloud, nc):
			v.Excluded[node.Name] = fmt.Sprintf("its NodeClaim's nodeClassRef (%s) is not served by the %s provider: tenon does not manage it",
				refKind(nc.Spec.NodeClassRef), b.src.Cloud.Name())
			continue
		case static[pool]:
			v.Excluded[node.Name] = fmt.Sprintf("nodepool %s is static and the %s feature gate is off: its nodes are not disrupted", pool, featuregates.StaticCapacity)
			continue
		case o.Held[node.Name] != "":
			v.Excluded[node.Name] = o.Held[node.Name]
			continue
		}
		seen[nc.UID] = true
		n := b.node(ctx, now, node, nc, v, policy[pool])
		n.Deleting = n.Deleting || o.Busy[node.Name]
		add(n)
		v.Nodes[node.Name], v.Claims[node.Name] = node, nc
	}
	// A claim being deleted whose node is already gone is still disrupting: it counts against
	// its nodepool's budgets until it is gone too.
	for _, nc := range claims {
		if registered[nc.Name] || nc.DeletionTimestamp == nil || nc.Status.ProviderID == "" || static[nc.Labels[apisv1.NodePoolLabelKey]] ||
			!cloudprovider.IsManaged(b.src.Cloud, nc) {
			continue
		}
		add(disruption.Node{
			Name: nc.Name, NodeClaim: nc.Name, NodePool: nc.Labels[apisv1.NodePoolLabelKey],
			CreatedAt: nc.CreationTimestamp.Time, Initialized: nc.IsTrue(apisv1.ConditionTypeInitialized), Deleting: true,
		})
		v.Claims[nc.Name] = nc
	}
	b.billPrices(ctx, v)
	for i := range sv.Snapshot.Nodes {
		sn := &sv.Snapshot.Nodes[i]
		if n, ok := v.Node(sn.Name); ok && !sn.InFlight {
			sn.Price = n.Price
		}
	}
	b.prune(seen)
	return v, err
}

// billPrices replaces the nodes' offering prices by what removing each saves on the bill, when
// the cloud prices with commitments (cloudprovider.NodePricer).
func (b *Builder) billPrices(ctx context.Context, v *View) {
	pricer, ok := b.src.Cloud.(cloudprovider.NodePricer)
	if !ok {
		return
	}
	nodes := v.Snapshot.Nodes
	in := make([]cloudprovider.PricedNode, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		in[i] = cloudprovider.PricedNode{NodePool: n.NodePool, InstanceType: n.InstanceType, Zone: n.Zone,
			CapacityType: n.CapacityType, ReservationID: n.ReservationID, Deleting: n.Deleting}
	}
	for i, p := range pricer.NodePrices(ctx, in) {
		if !v.PriceUnknown[nodes[i].Name] {
			nodes[i].Price = p
		}
	}
}

// staticClaim records in the view what a static NodePool launches (Snapshot.Static) and its
// instance types, for its nodes' prices. A NodePool that is not Ready or is being deleted
// launches nothing: its drifted and expired nodes wait.
func (b *Builder) staticClaim(ctx context.Context, np *apisv1.NodePool, v *View) error {
	its, err := b.src.Cloud.GetInstanceTypes(ctx, np)
	if err != nil {
		return fmt.Errorf("instance types of static nodepool %s: %w", np.Name, err)
	}
	byName := make(map[string]*catalog.InstanceType, len(its))
	for _, it := range its {
		byName[it.Name] = it
	}
	if v.solver.Types == nil {
		v.solver.Types = map[string]map[string]*catalog.InstanceType{}
	}
	v.solver.Types[np.Name] = byName
	if np.DeletionTimestamp != nil || !np.IsTrue(apisv1.ConditionTypeReady) {
		return nil
	}
	if b.src.Filter != nil {
		its = b.src.Filter.Apply(its)
	}
	cl, err := snapshot.StaticClaim(np, its)
	if err != nil || cl == nil {
		return err
	}
	if v.Snapshot.Static == nil {
		v.Snapshot.Static = map[string]*solver.Claim{}
	}
	v.Snapshot.Static[np.Name] = cl
	return nil
}

// refKind names a nodeClassRef's kind and group for a reason.
func refKind(ref *apisv1.NodeClassReference) string {
	if ref == nil {
		return "none"
	}
	return ref.Kind + "." + ref.Group
}

// poolPolicy is what drift compares a nodepool's claims against.
type poolPolicy struct {
	hash    string
	reqs    scheduling.Requirements
	reqsErr error
}

// node describes one managed node.
func (b *Builder) node(ctx context.Context, now time.Time, node *corev1.Node, nc *apisv1.NodeClaim, v *View, pol *poolPolicy) disruption.Node {
	cluster := b.src.Cluster
	label := func(k string) string {
		if val, ok := node.Labels[k]; ok {
			return val
		}
		return nc.Labels[k]
	}
	n := disruption.Node{
		Name:          node.Name,
		NodeClaim:     nc.Name,
		NodePool:      nc.Labels[apisv1.NodePoolLabelKey],
		InstanceType:  label(apisv1.LabelInstanceType),
		Zone:          label(apisv1.LabelZone),
		CapacityType:  label(apisv1.CapacityTypeLabelKey),
		ReservationID: label(apisv1.LabelCapacityReservationID),
		CreatedAt:     nc.CreationTimestamp.Time,
		Initialized:   nc.IsTrue(apisv1.ConditionTypeInitialized),
		Deleting: nc.DeletionTimestamp != nil || node.DeletionTimestamp != nil ||
			cluster.IsMarkedForDeletion(node.Name) || cluster.IsMarkedForDeletion(nc.Name) || HasDisruptedTaint(node),
		NotReady:     !nodeReady(node),
		Nominated:    cluster.IsNominated(node.Name) || cluster.IsNominated(nc.Name) || v.nominatedTo[node.Name],
		DoNotDisrupt: node.Annotations[apisv1.DoNotDisruptAnnotationKey] == "true" || nc.Annotations[apisv1.DoNotDisruptAnnotationKey] == "true",
		LastPodEvent: cluster.LastPodEvent(node.Name),
	}
	if t := nc.Status.LastPodEventTime.Time; t.After(n.LastPodEvent) {
		n.LastPodEvent = t
	}
	if p, ok := price(v.solver.Types[n.NodePool], n); ok {
		n.Price = p
	} else {
		v.PriceUnknown[node.Name] = true
	}
	if ea := nc.Spec.ExpireAfter; !ea.IsNever() {
		n.ExpireAt = nc.CreationTimestamp.Add(*ea.Duration)
	}
	if !n.Deleting {
		var reason string
		reason, n.Drifted = b.drifted(ctx, now, node, nc, pol)
		if reason != "" {
			v.DriftReasons[node.Name] = reason
		}
	}
	return n
}

// price is what a node runs at: the offering of its instance type in its zone and capacity type
// (and reservation) among its nodepool's instance types.
func price(types map[string]*catalog.InstanceType, n disruption.Node) (float64, bool) {
	it, ok := types[n.InstanceType]
	if !ok {
		return 0, false
	}
	for i := range it.Offerings {
		o := &it.Offerings[i]
		if o.Zone == n.Zone && o.CapacityType == n.CapacityType && (o.CapacityType != apisv1.CapacityTypeReserved || o.ReservationID == n.ReservationID) {
			return o.Price, true
		}
	}
	return 0, false
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// HasDisruptedTaint reports whether the node carries karpenter.sh/disrupted:NoSchedule.
func HasDisruptedTaint(node *corev1.Node) bool {
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].MatchTaint(&apisv1.DisruptedNoScheduleTaint) {
			return true
		}
	}
	return false
}

// drifted says why a node no longer matches its nodepool or node class ("" when it does): the
// nodepool's template changed since the claim was made from it (a claim stamped by another
// hash version is not judged), a requirement of the nodepool no longer allows one of the
// node's labels, or the cloud provider reports drift.
func (b *Builder) drifted(ctx context.Context, now time.Time, node *corev1.Node, nc *apisv1.NodeClaim, pol *poolPolicy) (reason, msg string) {
	if pol != nil {
		if h, ok := nc.Annotations[apisv1.NodePoolHashAnnotationKey]; ok && h != pol.hash &&
			nc.Annotations[apisv1.NodePoolHashVersionAnnotationKey] == apisv1.NodePoolHashVersion {
			return DriftNodePool, "the nodepool's template changed"
		}
		if pol.reqsErr == nil {
			for _, r := range pol.reqs.Items() {
				if val, ok := node.Labels[r.Key]; ok && !r.Matches(val, true) {
					return DriftRequirements, fmt.Sprintf("the nodepool's requirements no longer allow %s=%s", r.Key, val)
				}
			}
		}
	}
	if nc.Status.ProviderID == "" {
		return "", ""
	}
	if reason := b.cloudDrift(ctx, now, nc); reason != "" {
		return string(reason), "the cloud provider reports " + string(reason)
	}
	return "", ""
}

// Drift reasons of the Drifted condition found by tenon itself, as Karpenter names them; the
// cloud provider's IsDrifted supplies the others.
const (
	DriftNodePool     = "NodePoolDrifted"
	DriftRequirements = "RequirementsDrifted"
)

// cloudDrift asks the cloud provider whether the claim drifted, reusing a verdict younger than
// driftTTL. A failed check counts as no drift until the next check.
func (b *Builder) cloudDrift(ctx context.Context, now time.Time, nc *apisv1.NodeClaim) cloudprovider.DriftReason {
	b.mu.Lock()
	v, ok := b.drift[nc.UID]
	b.mu.Unlock()
	if ok && now.Sub(v.at) < b.driftTTL {
		return v.reason
	}
	reason, err := b.src.Cloud.IsDrifted(ctx, nc)
	if err != nil {
		reason = ""
	}
	b.mu.Lock()
	b.drift[nc.UID] = driftVerdict{reason: reason, at: now}
	b.mu.Unlock()
	return reason
}

// prune forgets the verdicts of claims no longer seen.
func (b *Builder) prune(seen map[types.UID]bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for uid := range b.drift {
		if !seen[uid] {
			delete(b.drift, uid)
		}
	}
}

// newBuilder returns a builder reading from src; drift verdicts of the cloud provider are
// reused for driftTTL.
func newBuilder(src *solverinput.Source, clk clock.PassiveClock, driftTTL time.Duration, static bool) *Builder {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Builder{src: src, clock: clk, driftTTL: driftTTL, static: static, drift: map[types.UID]driftVerdict{}}
}
