package disruption

import (
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/solver"
)

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
