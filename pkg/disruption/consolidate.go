package disruption

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// consolidation removes or replaces underutilized nodes where that lowers the fleet's price:
// first the largest set of candidates whose pods fit elsewhere with at most one replacement,
// or, when no set goes with one replacement, the largest set of quiet nodes (Options.
// RepackAfter) that fewer new nodes can hold (N→M repack); then candidates one at a time (delete, or replace by cheaper capacity, 1→N
// included).
func (d *decider) consolidation() error {
	var eligible []*candidate
	for _, c := range d.ordered() {
		if d.taken[c.Name] {
			continue
		}
		if d.receiving[c.Name] {
			d.skip(c, SkipReceiving, "it receives pods from another command of this pass")
			continue
		}
		if c.pool == nil {
			d.skip(c, SkipNoNodePool, "nodepool %q does not exist", c.NodePool)
			continue
		}
		if c.static() {
			d.skip(c, SkipStatic, "nodepool %s is static: it is kept at its replicas, only drift and expiration replace its nodes", c.NodePool)
			continue
		}
		if p := c.pool.Spec.Disruption.ConsolidationPolicy; p == apisv1.ConsolidationPolicyWhenEmpty {
			d.skip(c, SkipPolicy, "nodepool %s consolidates only empty nodes", c.NodePool)
			continue
		}
		if r, msg := d.blocked(c); r != "" {
			d.skip(c, r, "%s", msg)
			continue
		}
		if !d.settled(c) {
			continue
		}
		eligible = append(eligible, c)
	}
	eligible, alone := d.wholeUnits(eligible)
	if len(eligible) == 0 {
		return nil
	}
	before := len(d.dec.Commands)
	if err := d.multiNode(alone, evalMulti); err != nil {
		return err
	}
	if len(d.dec.Commands) == before && !d.opts.NoRepack {
		// No set goes with one replacement: repacking several nodes onto fewer new ones
		// leaves the local optimum of one-replacement moves; only nodes quiet for RepackAfter.
		var quiet []*candidate
		for _, c := range alone {
			if d.snap.Now.Sub(c.lastChange()) >= d.opts.RepackAfter {
				quiet = append(quiet, c)
			}
		}
		if err := d.multiNode(quiet, evalRepack); err != nil {
			return err
		}
	}
	return d.singleNode(eligible)
}

// evalKind is the shape of consolidation command a simulation may yield.
type evalKind int

const (
	// evalSingle: one node, deleted or replaced by any number of cheaper nodes (1→N).
	evalSingle evalKind = iota
	// evalMulti: several nodes, with at most one replacement.
	evalMulti
	// evalRepack: several nodes onto fewer new nodes (N→M, M < N).
	evalRepack
)

// multiNode binary-searches the longest prefix of the candidates (dearest first) that can go
// at once with at most one replacement, for a saving above the floors.
func (d *decider) multiNode(eligible []*candidate, kind evalKind) error {
	// The nodes whose pods leave most of their price unused merge best; the ones that save most
	// come next.
	byIdle := slices.Clone(eligible)
	slices.SortStableFunc(byIdle, func(a, b *candidate) int { return cmp.Compare(b.idle, a.idle) })
	for _, order := range [][]*candidate{byIdle, eligible} {
		if done, err := d.multiNodePrefix(order, kind); done || err != nil {
			return err
		}
	}
	return nil
}

// multiNodePrefix looks for the longest prefix of the candidates, in their order, that one
// command can remove, and commits it. It reports whether it did.
func (d *decider) multiNodePrefix(eligible []*candidate, kind evalKind) (bool, error) {
	var prefix []*candidate
	for _, c := range eligible {
		if len(prefix) == d.opts.MaxMultiNode {
			break
		}
		if c.CapacityType == apisv1.CapacityTypeReserved && len(c.place) > 0 {
			continue // reserved nodes holding pods are judged one at a time
		}
		prefix = append(prefix, c)
	}
	if len(prefix) < 2 || d.recall.fruitless(kind, prefix) {
		return false, nil
	}
	var best *Command
	lo, hi := 2, len(prefix)
	for lo <= hi && d.world.runs < d.opts.MaxSimulations {
		mid := (lo + hi) / 2
		cmd, _, err := d.evaluate(prefix[:mid], kind)
		if err != nil {
			return false, err
		}
		if cmd != nil {
			best, lo = cmd, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best == nil {
		if lo > hi {
			d.recall.foundNothing(kind, prefix)
		}
		return false, nil
	}
	return true, d.commit(*best)
}

// singleNode judges candidates one at a time (the nodes of a unit together), starting where the
// last pass stopped.
func (d *decider) singleNode(eligible []*candidate) error {
	judged := map[*unit]bool{}
	start := 0
	for i, c := range eligible {
		if c.Name == d.opts.Cursor {
			start = i
			break
		}
	}
	for k := 0; k < len(eligible); k++ {
		c := eligible[(start+k)%len(eligible)]
		if d.world.runs >= d.opts.MaxSimulations || len(d.dec.Commands) >= d.opts.MaxCommands {
			d.dec.Cursor = c.Name
			if d.world.runs >= d.opts.MaxSimulations {
				d.dec.Outcome = OutcomeTruncated
			}
			for _, rest := range eligible[(start+k)%len(eligible):] {
				d.skip(rest, SkipNotReached, "the pass ended before reaching it")
			}
			return nil
		}
		if d.taken[c.Name] || (c.unit != nil && judged[c.unit]) {
			continue
		}
		if d.receiving[c.Name] {
			d.skip(c, SkipReceiving, "it receives pods from another command of this pass")
			continue
		}
		if v, ok := d.recall.lookup(c); ok {
			d.skip(c, v.reason, "%s", v.message)
			continue
		}
		cs := c.whole()
		if c.unit != nil {
			judged[c.unit] = true
			if r, msg := d.unitBlocked(c); r != "" {
				d.skipAll(cs, r, msg)
				continue
			}
		}
		cmd, skip, err := d.evaluate(cs, evalSingle)
		if err != nil {
			return err
		}
		if skip != nil {
			d.recall.remember(c, skip, d.simulated, d.world)
			d.skipAll(cs, skip.Reason, skip.Message)
			continue
		}
		if err := d.commit(*cmd); err != nil {
			return err
		}
	}
	d.dec.Cursor = ""
	return nil
}

// evaluate simulates removing the candidates and returns the command if it is worth it, or
// why it is not. multi asks for at most one replacement.
func (d *decider) evaluate(cs []*candidate, kind evalKind) (*Command, *Skip, error) {
	pool := cs[0].NodePool
	d.simulated = nil
	reject := func(r SkipReason, format string, args ...any) (*Command, *Skip, error) {
		return nil, &Skip{Node: cs[0].Name, Reason: r, Message: fmt.Sprintf(format, args...)}, nil
	}
	// A unit's nodes are counted against each one's own NodePool; a multi-node set also against
	// the first one's.
	if !isUnit(cs) && !d.budgets.allows(pool, apisv1.DisruptionReasonUnderutilized, len(cs)) {
		return reject(SkipBudget, "the disruption budgets of nodepool %s allow no more consolidation now", pool)
	}
	if refusing := d.budgetRefuses(cs, apisv1.DisruptionReasonUnderutilized); refusing != "" {
		return reject(SkipBudget, "the disruption budgets of nodepool %s allow no more consolidation now", refusing)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	all := podsOf(cs)
	if pdb := d.pdbs.blocking(all); pdb != "" {
		return reject(SkipPDB, "evicting its pods would violate PodDisruptionBudget %s", pdb)
	}
	price := d.price(cs)
	opts := d.poolOptions(cs[0].pool)
	floor := max(opts.MinSavingsPerHour, opts.MinSavingsFraction*price)
	// The cheap necessary condition first: what the pods must cost on new capacity, from room
	// and prices alone, against what removing the nodes must save. Reserved nodes go to the
	// solve, whose reservedRules say why they stay.
	place := placeOf(cs)
	fl, ok := solver.Floor{}, false
	if !slices.ContainsFunc(cs, reserved) {
		fl, ok = d.floor(names, place, kind == evalMulti, spotFloors(cs))
	}
	if ok {
		least := fl.Price
		switch most := price - least; {
		case math.IsInf(least, 1) && kind == evalSingle:
			// Let the solve say which pods go nowhere.
		case math.IsInf(least, 1):
			return reject(SkipNotCheaper, "no instance type holds what the other nodes have no room for")
		case most <= 0:
			return reject(SkipNotCheaper, "its pods would need at least $%.4f/h of new capacity, it costs $%.4f/h", least, price)
		case most < floor:
			return reject(SkipSavingsFloor, "it would save at most $%.4f/h, under the floor of $%.4f/h", most, floor)
		}
		if r, msg := d.spotFloor(cs, fl.Homeless, opts); r != "" {
			return reject(r, "%s", msg)
		}
	}
	o, err := d.world.remove(names, place)
	if err != nil {
		return nil, nil, err
	}
	d.simulated = o
	if o.stranded > 0 {
		return reject(SkipUnschedulable, "%d of its pods would fit nowhere", o.stranded)
	}
	if o.uninitialized != "" {
		return reject(SkipUnschedulable, "not all pods would schedule, %s", o.uninitialized)
	}
	switch {
	case kind == evalMulti && len(o.replacements) > 1:
		return reject(SkipNotCheaper, "together they would need %d replacements", len(o.replacements))
	case kind == evalRepack && len(o.replacements) >= len(cs):
		return reject(SkipNotCheaper, "their pods would need %d new nodes for %d removed", len(o.replacements), len(cs))
	}
	if kind != evalSingle && len(o.replacements) == 1 && !keepCheaperThanCandidates(o, cs) {
		return reject(SkipNotCheaper, "the replacement is no cheaper than keeping one of them")
	}
	if r, msg := d.reservedRules(cs, o); r != "" {
		return reject(r, "%s", msg)
	}
	// Replacements cost what they launch at; the delta also covers pending pods the removal
	// would push onto new capacity.
	savings := price - o.delta
	if savings <= 0 {
		return reject(SkipNotCheaper, "its pods would cost $%.4f/h elsewhere, it costs $%.4f/h", o.delta, price)
	}
	if savings < floor {
		return reject(SkipSavingsFloor, "it would save $%.4f/h, under the floor of $%.4f/h", savings, floor)
	}
	if !capReplacements(o, savings-floor, floor > 0) {
		return reject(SkipNotCheaper, "too few instance types cheap enough to still save would be left for the replacement's minValues")
	}
	if savings = price - o.delta; savings <= 0 || savings < floor {
		return reject(SkipSavingsFloor, "it would save $%.4f/h, under the floor of $%.4f/h", savings, floor)
	}
	if r, msg := d.spotRules(cs, o, opts); r != "" {
		return reject(r, "%s", msg)
	}
	if cs[0].pool.Spec.Disruption.ConsolidationPolicy == apisv1.ConsolidationPolicyBalanced {
		if score := d.balancedScore(cs, savings); score < opts.BalancedThreshold {
			return reject(SkipBalanced, "its balanced score %.2f is under %.2f", score, opts.BalancedThreshold)
		}
	}
	why := "underutilized"
	switch {
	case isUnit(cs):
		why = fmt.Sprintf("underutilized, with the other nodes of %s", cs[0].unit.names())
	case kind == evalRepack && len(o.replacements) > 1:
		why = fmt.Sprintf("%d underutilized nodes repacked onto %d", len(cs), len(o.replacements))
	case kind != evalSingle:
		why = fmt.Sprintf("%d underutilized nodes together", len(cs))
	}
	cmd := d.command(MethodConsolidation, apisv1.DisruptionReasonUnderutilized, cs, o, why)
	cmd.Savings = savings
	return &cmd, nil, nil
}

// budgetRefuses names the NodePool among cs whose budgets do not allow all its nodes among
// them at once for reason (the first by name), or "" when every pool's do.
func (d *decider) budgetRefuses(cs []*candidate, reason apisv1.DisruptionReason) string {
	if !slices.ContainsFunc(cs, func(c *candidate) bool { return c.NodePool != cs[0].NodePool }) {
		if !d.budgets.allows(cs[0].NodePool, reason, len(cs)) {
			return cs[0].NodePool
		}
		return ""
	}
	n := map[string]int{}
	for _, c := range cs {
		n[c.NodePool]++
	}
	for _, pool := range slices.Sorted(maps.Keys(n)) {
		if !d.budgets.allows(pool, reason, n[pool]) {
			return pool
		}
	}
	return ""
}

// placeOf returns the candidates' pods that need a place elsewhere.
func placeOf(cs []*candidate) []*corev1.Pod {
	var out []*corev1.Pod
	for _, c := range cs {
		out = append(out, c.place...)
	}
	return out
}

func podsOf(cs []*candidate) []*corev1.Pod {
	var out []*corev1.Pod
	for _, c := range cs {
		out = append(out, c.pods...)
	}
	return out
}

// keepCheaperThanCandidates narrows a multi-node replacement to the options cheaper than every
// candidate of the same instance type: launching a type one of the candidates already is, at
// no lower price, only does what keeping that candidate and removing the others would do, with
// a launch and a drain more. It reports whether any option is left, and keeps the outcome's
// price delta in step with what the replacement now launches as.
func keepCheaperThanCandidates(o *outcome, cs []*candidate) bool {
	r := o.replacements[0]
	ceiling := -1.0
	for _, c := range cs {
		for _, it := range r.InstanceTypes {
			if it.Name == c.InstanceType && (ceiling < 0 || c.Price < ceiling) {
				ceiling = c.Price
			}
		}
	}
	if ceiling < 0 {
		return true
	}
	before := r.Price
	if !r.Narrow(func(_ *catalog.InstanceType, price float64) bool { return price < ceiling }) {
		return false
	}
	o.delta += r.Price - before
	return true
}

// capReplacements narrows the replacements to the options that keep the command worth taking
// whatever they launch as. A replacement is planned as its cheapest option, but the launch takes
// the cheapest offering that is available then, and the claim lists dearer types too: left
// alone, a replacement whose cheap options ran out of capacity would launch as a type dearer than
// the nodes it replaces. slack is what the command saves beyond its floor; it is shared evenly
// between the replacements, so that every combination of options they can launch as still saves
// at least the floor (more than nothing when there is no floor: atFloor is false then). The
// outcome's price delta follows what the replacements are now planned as. It reports false,
// changing nothing, when a replacement would keep too few values for its minValues.
func capReplacements(o *outcome, slack float64, atFloor bool) bool {
	if len(o.replacements) == 0 {
		return true
	}
	share := slack / float64(len(o.replacements))
	narrowed := make([]*solver.Claim, len(o.replacements))
	for i, r := range o.replacements {
		cp := *r
		limit := r.Price + share
		if !cp.Narrow(func(_ *catalog.InstanceType, price float64) bool {
			return price <= r.Price || price < limit || (atFloor && price == limit)
		}) {
			return false
		}
		narrowed[i] = &cp
	}
	for i, r := range o.replacements {
		o.delta += narrowed[i].Price - r.Price
		*r = *narrowed[i]
	}
	return true
}

// reservedRules keeps reserved capacity where it pays: a reserved node is never swapped for
// another reserved node (its near-zero price would make any swap look free), and a reserved node
// holding pods is never consolidated onto capacity that is not reserved.
func (d *decider) reservedRules(cs []*candidate, o *outcome) (SkipReason, string) {
	for _, c := range cs {
		if c.CapacityType != apisv1.CapacityTypeReserved {
			continue
		}
		for _, r := range o.replacements {
			if r.Offering.CapacityType == apisv1.CapacityTypeReserved {
				return SkipReserved, "a reserved node is not swapped for another reserved node"
			}
		}
		if len(c.place) > 0 && !d.onReserved(c, o) {
			return SkipReserved, "a reserved node holding pods is not consolidated onto capacity that is not reserved"
		}
	}
	return "", ""
}

// spotRules lets a spot node be replaced by spot only when it is old enough and enough instance
// types are cheaper than it, and narrows the replacement to those cheaper types.
func (d *decider) spotRules(cs []*candidate, o *outcome, opts Options) (SkipReason, string) {
	if !opts.SpotToSpotConsolidation && allSpot(cs) && slices.ContainsFunc(o.replacements, func(r *solver.Claim) bool {
		return r.Offering.CapacityType == apisv1.CapacityTypeSpot
	}) {
		return SkipSpotToSpot, "spot-to-spot consolidation is off (feature gate SpotToSpotConsolidation): spot nodes are not replaced by spot"
	}
	if len(cs) != 1 || cs[0].CapacityType != apisv1.CapacityTypeSpot {
		return "", ""
	}
	c := cs[0]
	for _, r := range o.replacements {
		if r.Offering.CapacityType != apisv1.CapacityTypeSpot {
			continue
		}
		if age := d.snap.Now.Sub(c.CreatedAt); age < opts.SpotToSpotMinAge {
			return SkipSpotToSpotTooNew, fmt.Sprintf("spot-to-spot waits until the node is %s old (it is %s)", opts.SpotToSpotMinAge, age.Round(1e9))
		}
		cheaper := 0
		q := catalog.NewQuery(r.Requirements)
		for _, it := range r.InstanceTypes {
			if i := q.CheapestOffered(it); i >= 0 && it.Offerings[i].Price < c.Price {
				cheaper++
			}
		}
		if cheaper < opts.SpotToSpotMinInstanceTypes {
			return SkipSpotToSpot, fmt.Sprintf("spot-to-spot needs %d instance types cheaper than the node, %d are", opts.SpotToSpotMinInstanceTypes, cheaper)
		}
		truncateCheaper(r, c.Price)
	}
	return "", ""
}

// spotFloor applies spotRules before a solve, from the pods of a spot node that no other node
// has room for (homeless): each lands on a replacement whose instance type holds it. When no type
// that is not spot holds one of them for less than the node, its replacement is spot or no
// cheaper than the node, and spot needs the feature gate and enough cheaper types holding it.
func (d *decider) spotFloor(cs []*candidate, homeless []scheduling.Resources, opts Options) (SkipReason, string) {
	if !spotFloors(cs) {
		return "", ""
	}
	price := cs[0].Price
	for i := range homeless {
		h := &homeless[i]
		if d.world.prep.TypesHolding(h, price, true, 1) > 0 {
			continue
		}
		if !opts.SpotToSpotConsolidation {
			return SkipSpotToSpot, "spot-to-spot consolidation is off (feature gate SpotToSpotConsolidation): only spot capacity cheaper than the node holds its pods"
		}
		if n := d.world.prep.TypesHolding(h, price, false, opts.SpotToSpotMinInstanceTypes); n < opts.SpotToSpotMinInstanceTypes {
			return SkipSpotToSpot, fmt.Sprintf("spot-to-spot needs %d instance types cheaper than the node, at most %d hold its pods", opts.SpotToSpotMinInstanceTypes, n)
		}
	}
	return "", ""
}

// spotFloors reports whether spotFloor judges a set of candidates: one spot node.
func spotFloors(cs []*candidate) bool {
	return len(cs) == 1 && cs[0].CapacityType == apisv1.CapacityTypeSpot
}

func reserved(c *candidate) bool { return c.CapacityType == apisv1.CapacityTypeReserved }

func allSpot(cs []*candidate) bool {
	return !slices.ContainsFunc(cs, func(c *candidate) bool { return c.CapacityType != apisv1.CapacityTypeSpot })
}

// truncateCheaper keeps only the options of a spot replacement that are cheaper than the node
// it replaces, so that the launch cannot land on something dearer.
func truncateCheaper(r *solver.Claim, price float64) {
	r.Narrow(func(_ *catalog.InstanceType, p float64) bool { return p < price })
}

// onReserved reports whether all the node's pods would land on other reserved nodes.
func (d *decider) onReserved(c *candidate, o *outcome) bool {
	moved := map[*corev1.Pod]bool{}
	for _, p := range c.place {
		moved[p] = true
	}
	for _, pl := range o.plan.Placements {
		if !moved[pl.Pod] {
			continue
		}
		if t, ok := d.byName[pl.Node]; !ok || t.CapacityType != apisv1.CapacityTypeReserved {
			return false
		}
	}
	for _, cl := range o.replacements {
		if cl.Offering.CapacityType != apisv1.CapacityTypeReserved {
			return false
		}
	}
	return true
}

// balancedScore is the savings fraction of the candidates' pool over their disruption fraction.
func (d *decider) balancedScore(cs []*candidate, savings float64) float64 {
	pool := cs[0].NodePool
	var poolPrice, poolCost, cost float64
	for _, c := range d.cands {
		if c.NodePool == pool {
			poolPrice += c.Price
			poolCost += c.disruptionCost
		}
	}
	for _, c := range cs {
		cost += c.disruptionCost
	}
	if poolPrice <= 0 {
		return 0
	}
	if cost == 0 || poolCost == 0 {
		return 1e9 // nothing to disrupt
	}
	return (savings / poolPrice) / (cost / poolCost)
}

// poolOptions is Options.forPool, read once a pass for each NodePool.
func (d *decider) poolOptions(np *apisv1.NodePool) Options {
	if o, ok := d.byPool[np]; ok {
		return o
	}
	if d.byPool == nil {
		d.byPool = map[*apisv1.NodePool]Options{}
	}
	o := d.opts.forPool(np)
	d.byPool[np] = o
	return o
}
