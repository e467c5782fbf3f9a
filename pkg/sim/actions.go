package sim

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func (r *run) requests(p *Pod) *scheduling.Resources { return &r.env.Workload.Shapes[p.Shape].Requests }

// shapeFits reports whether pod p may go to node n and fits in its room.
func (r *run) shapeFits(p *Pod, n *Node) bool {
	req := r.requests(p)
	free := n.Free()
	return req.Fits(&free) && r.compatible(int(p.Shape), n)
}

// attach puts a pod on a node's books.
func (r *run) attach(p *Pod, n *Node) {
	r.pend.leave(p)
	p.Node = n.ID
	n.Pods = append(n.Pods, p.ID)
	n.Used = n.Used.Add(*r.requests(p))
	if !n.Disrupting {
		r.free = r.free.Sub(*r.requests(p))
	}
}

// detach takes a pod off its node's books.
func (r *run) detach(p *Pod) *Node {
	if p.Node == NoNode {
		return nil
	}
	n := r.nodes[p.Node]
	if i := slices.Index(n.Pods, p.ID); i >= 0 {
		n.Pods[i] = n.Pods[len(n.Pods)-1]
		n.Pods = n.Pods[:len(n.Pods)-1]
	}
	n.Used = n.Used.Sub(*r.requests(p))
	if !n.Disrupting {
		r.free = r.free.Add(*r.requests(p))
		r.roomEpoch++ // room on a node being taken away helps no one
		r.gangEpoch++
	}
	p.Node = NoNode
	return n
}

// nominate promises a pending pod to a node that is not ready yet.
func (r *run) nominate(p *Pod, n *Node) {
	r.attach(p, n)
	p.State = PodNominated
}

// bind starts a pod on a ready node (a pending pod, or one nominated to this node).
func (r *run) bind(p *Pod, n *Node) {
	if p.State != PodNominated {
		r.attach(p, n)
	}
	p.State = PodRunning
	p.Started = r.now
	r.running++
	p.gen++
	n.running++
	n.LastChange = r.now
	if !p.everRan {
		p.everRan = true
		r.met.started(r.now - p.Submitted)
	}
	r.met.run(r.requests(p), +1)
	if p.Work >= 0 {
		r.q.push(event{at: r.now + p.Work, kind: evFinish, x: int32(p.ID), gen: p.gen})
	}
	r.markDirty()
}

// stopped counts a pod that stopped running, and notes when none runs any more.
func (r *run) stopped() {
	r.running--
	if r.running == 0 {
		r.idleSince = r.now
	}
}

// finishPod ends a run of a pod unless the event is stale (the pod was evicted since).
func (r *run) finishPod(p *Pod, gen uint32) {
	if p.State != PodRunning || p.gen != gen {
		return
	}
	n := r.nodes[p.Node]
	r.complete(p)
	r.fillNode(n)
}

// complete marks a running pod done.
func (r *run) complete(p *Pod) {
	n := r.detach(p)
	n.running--
	r.stopped()
	n.LastChange = r.now
	p.State = PodDone
	p.Work = 0
	r.active--
	delete(r.api, p.ID)
	r.met.run(r.requests(p), -1)
	r.met.finished(r.now)
	r.markDirty()
}

// dropPending gives up on a pod that never got to run before the workload ended.
func (r *run) dropPending(p *Pod) {
	r.pend.leave(p)
	r.detach(p)
	p.State = PodDone
	r.active--
	delete(r.api, p.ID)
}

// evict takes a pod off its node; it becomes pending again (a running pod keeps the work it
// has left, plus the restart penalty).
func (r *run) evict(p *Pod) {
	switch p.State {
	case PodRunning:
		n := r.detach(p)
		n.running--
		r.stopped()
		n.LastChange = r.now
		if p.Work >= 0 {
			p.Work = max(p.Work-(r.now-p.Started), 0) + r.opts.RestartPenalty
		}
		p.Evictions++
		r.met.run(r.requests(p), -1)
		r.met.evicted()
	case PodNominated:
		r.detach(p)
	default:
		return
	}
	p.State = PodPending
	r.markDirty()
}

// launch buys a node for l (for command cmd's replacements when cmd ≥ 0). A launch the cloud
// refuses leaves l's pods pending.
func (r *run) launch(l Launch, cmd int32) *Node {
	pool := r.env.Pools[l.Pool]
	reqs := scheduling.NewRequirements(
		scheduling.In(apisv1.LabelInstanceType, l.Type.Name),
		scheduling.In(apisv1.LabelZone, l.Offering.Zone),
		scheduling.In(apisv1.CapacityTypeLabelKey, l.Offering.CapacityType),
	)
	if id := l.Offering.ReservationID; id != "" {
		reqs = reqs.Add(scheduling.In(apisv1.LabelCapacityReservationID, id))
	}
	var need scheduling.Resources
	for _, id := range l.Pods {
		need = need.Add(*r.requests(&r.pods[id]))
	}
	ds := r.daemonRequests(pool, l.Type.NodeLabels(&l.Offering))
	need = need.Add(ds)
	// Resources only NodeOverlays give (a shared GPU's replicas) are the device plugin's, not
	// the cloud's: the cloud is asked for the rest.
	for s, has := range r.env.cloudSlots(l.Pool) {
		if !has {
			need[s] = 0
		}
	}
	prices := r.launchPrices()
	if prices != nil && l.Options.Len() > 0 {
		// The plan priced each claim of the batch on the same room: the launch chooses again,
		// on the room the fleet and the launches before it leave.
		if it, o := r.pickLaunch(l.Pool, l.Options, need); it != nil {
			reqs = scheduling.NewRequirements(
				scheduling.In(apisv1.LabelInstanceType, it.Name),
				scheduling.In(apisv1.LabelZone, o.Zone),
				scheduling.In(apisv1.CapacityTypeLabelKey, o.CapacityType),
			)
			if id := o.ReservationID; id != "" {
				reqs = reqs.Add(scheduling.In(apisv1.LabelCapacityReservationID, id))
			}
		}
	}
	mig := pool.Labels[catalog.LabelMIGConfig]
	inst, err := r.cloud.Launch(cloud.LaunchRequest{Class: pool.Class, Requirements: reqs, Requests: need, Prices: prices, MIGConfig: mig}, r.wall(r.now))
	if err != nil && l.Options.Len() > 0 {
		inst, err = r.cloud.Launch(cloud.LaunchRequest{Class: pool.Class, Requirements: l.Options, Requests: need, Prices: prices, MIGConfig: mig}, r.wall(r.now))
	}
	if err != nil {
		r.stats.LaunchFailures++
		r.iceWaiting = true
		return nil
	}
	// The node is the pool's (overlaid) type, billed at the overlaid price: a NodeOverlay's
	// capacity is what the node advertises (as a device plugin would), its price what it costs.
	typ, off := r.env.overlaidOffering(l.Pool, inst.Type, inst.Offering)
	n := &Node{
		ID: NodeID(len(r.nodes)), Pool: l.Pool, Type: typ, Offering: off, Price: off.Price,
		State: NodeLaunching, Launched: r.now, LastChange: r.now, instance: inst.ID, command: cmd,
	}
	n.Name = fmt.Sprintf("%s-%d", pool.Name, n.ID)
	n.labels = inst.Labels()
	for k, v := range pool.Labels {
		n.labels[k] = v
	}
	n.labels[apisv1.NodePoolLabelKey] = pool.Name
	n.daemons = r.daemonRequests(pool, n.labels)
	n.labels[corev1.LabelHostname] = n.Name
	n.snapLbls = make(map[string]string, len(r.env.keys))
	for k, v := range n.labels {
		if r.env.keys[k] {
			n.snapLbls[k] = v
		}
	}
	n.Alloc = typ.Allocatable().Sub(n.daemons)
	n.sig = r.signature(n)
	boot := r.boot[pool.Class]
	if !r.opts.BootDelay.IsZero() {
		boot = r.opts.BootDelay.Draw(r.rng)
	}
	n.ReadyAt = r.now + boot + pool.Registration
	if cloud.HasDevices(inst.Type) {
		n.ReadyAt += pool.DevicePlugin
	}
	r.nodes = append(r.nodes, n)
	r.alive = append(r.alive, n.ID)
	r.aliveVer++
	r.free = r.free.Add(n.Alloc)
	r.q.push(event{at: n.ReadyAt, kind: evReady, x: int32(n.ID)})
	if in := inst.Interruption; !in.IsZero() {
		r.q.push(event{at: in.Notice.Sub(r.env.Start), kind: evNotice, x: int32(n.ID)})
		r.q.push(event{at: in.Deadline.Sub(r.env.Start), kind: evDeadline, x: int32(n.ID)})
	}
	r.met.launched(n)
	r.roomEpoch++
	r.capEpoch++
	for _, id := range l.Pods {
		if p := &r.pods[id]; p.State == PodPending && r.shapeFits(p, n) {
			r.nominate(p, n)
		}
	}
	r.markDirty()
	return n
}

// daemonRequests sums the requests of the DaemonSets whose pods would run on a node of the pool
// with these labels.
func (r *run) daemonRequests(pool *Pool, labels map[string]string) scheduling.Resources {
	return daemonRequests(r.env, pool, labels)
}

func daemonRequests(env *Env, pool *Pool, labels map[string]string) scheduling.Resources {
	var total scheduling.Resources
	for _, d := range env.Workload.DaemonSets {
		if d.Pod == nil || scheduling.UntoleratedTaint(d.Pod.Spec.Tolerations, pool.Taints) != nil {
			continue
		}
		alts, err := scheduling.PodNodeRequirements(d.Pod)
		if err != nil {
			continue
		}
		for _, a := range alts {
			if a.Matches(labels) == nil {
				if req, err := scheduling.PodRequests(d.Pod); err == nil {
					total = total.Add(req)
				}
				break
			}
		}
	}
	return total
}

// ready makes a launched node usable: its nominated pods start, and pending pods that fit
// follow.
func (r *run) ready(n *Node) {
	if n.State != NodeLaunching {
		return
	}
	n.State = NodeReady
	r.met.ready(n)
	r.gangEpoch++
	for _, id := range slices.Clone(n.Pods) {
		if p := &r.pods[id]; p.State == PodNominated && !r.isGang(p.Job) {
			r.bind(p, n) // a gang's pods bind together (tryGangs, after this event)
		}
	}
	r.fillNode(n)
	if n.command >= 0 {
		r.replacementReady(r.commands[n.command])
	}
	r.markDirty()
}

// terminate removes a node: its pods must have left it. Billing stops once the instance has
// shut down.
func (r *run) terminate(n *Node, reason Reason) {
	if n.State == NodeGone {
		return
	}
	for _, id := range slices.Clone(n.Pods) {
		r.evict(&r.pods[id])
	}
	n.State = NodeGone
	r.setDisrupting(n, true)
	r.roomEpoch++ // budgets count one disrupting node fewer
	r.capEpoch++  // and the NodePool's limits one node fewer
	if i := slices.Index(r.alive, n.ID); i >= 0 {
		r.alive = slices.Delete(r.alive, i, i+1)
		r.aliveVer++
	}
	r.met.disrupted(reason)
	_ = r.cloud.Terminate(n.instance, r.wall(r.now)) // an instance the cloud already reclaimed is fine
	end := r.now
	if inst, ok := r.cloud.Instance(n.instance); ok && !inst.TerminatedAt.IsZero() {
		end = max(inst.TerminatedAt.Sub(r.env.Start), r.now)
	}
	r.q.push(event{at: end, kind: evTerminated, x: int32(n.ID)})
	r.markDirty()
}

// terminated stops billing a node; capacity it held in the cloud is free again.
func (r *run) terminated(n *Node) {
	n.shutDown = true
	if r.dynamic {
		r.roomEpoch++ // capacity pools and reservations have room again
		r.capEpoch++
	}
	r.met.gone(n)
	n.labels, n.snapLbls, n.Pods = nil, nil, nil // a long replay launches tens of thousands of nodes
	r.cloud.Advance(r.wall(r.now))
	_ = r.cloud.Forget(n.instance)
	if r.iceWaiting && r.pend.size > 0 {
		r.iceWaiting = false
		r.trigger()
	} else if r.pend.size > 0 {
		r.trigger() // limits may allow more now
	}
}

// notice handles a spot interruption notice (or a maintenance notice).
func (r *run) notice(n *Node) {
	if n.State == NodeGone {
		return
	}
	n.Notice = r.now
	if r.policy.HandleNotices {
		r.remove([]*Node{n}, ReasonInterrupted)
	}
}

// deadline reclaims an instance.
func (r *run) deadline(n *Node) {
	if n.State == NodeGone {
		return
	}
	r.remove([]*Node{n}, ReasonInterrupted)
}

// remove takes nodes away: their pods are evicted and go to other nodes or back to pending.
func (r *run) remove(nodes []*Node, reason Reason) {
	var evicted []PodID
	for _, n := range nodes {
		r.setDisrupting(n, true)
		evicted = append(evicted, n.Pods...)
	}
	r.view.counts = nil
	for _, n := range nodes {
		r.terminate(n, reason)
	}
	for _, id := range evicted {
		if p := &r.pods[id]; p.State == PodPending {
			r.makePending(p)
		}
	}
}

// setDisrupting marks a node as being taken away (it takes no pods, and its room no longer
// counts) or not.
func (r *run) setDisrupting(n *Node, on bool) {
	if n.Disrupting == on {
		return
	}
	n.Disrupting = on
	if on {
		r.free = r.free.Sub(n.Free())
	} else {
		r.free = r.free.Add(n.Free())
		r.gangEpoch++
	}
	r.view.counts = nil
}

// markDirty notes that the cluster changed: a disruption pass is due at the next tick.
func (r *run) markDirty() {
	r.view.counts = nil
	iv := r.opts.PassInterval
	at := (r.now/iv + 1) * iv
	if r.now%iv == 0 && r.now > r.lastPass {
		at = r.now
	}
	r.schedulePass(at)
}

func (r *run) schedulePass(at time.Duration) {
	if r.policy.Disrupter == nil || (r.passAt >= 0 && r.passAt <= at) {
		return
	}
	r.passGen++
	r.passAt = at
	r.q.push(event{at: at, kind: evPass, gen: r.passGen})
}

// pass runs the policy's disrupter and carries out its commands.
func (r *run) pass() {
	r.passAt = -1
	r.lastPass = r.now
	r.stats.Passes++
	cmds, wake := r.policy.Disrupter.Pass(r.wall(r.now), r.view)
	for _, c := range cmds {
		r.execute(c)
	}
	if !wake.IsZero() {
		iv := r.opts.PassInterval
		at := wake.Sub(r.env.Start)
		at = max((at+iv-1)/iv*iv, r.now+iv)
		r.schedulePass(at)
	}
}
