package solver

import (
	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// MaxInstanceTypes caps the instance-type options of a new claim.
const MaxInstanceTypes = catalog.MaxInstanceTypes

// Plan is the result of a solve.
type Plan struct {
	// Placements put pods on existing nodes and in-flight claims (the controller nominates them).
	Placements []Placement
	// Claims are the new NodeClaims to create.
	Claims []*Claim
	// Unschedulable pods could go nowhere, each with the reasons, one per NodePool tried.
	Unschedulable []Unschedulable
	// Price is the total $/h of the new claims, each at the offering it would launch at.
	Price float64
	// LowerBound is a proven lower bound on the price of new capacity for these pods: no plan
	// can place them for less. Price / LowerBound says how far from optimal the plan may be.
	LowerBound float64
	// Relaxed counts the pods placed only after dropping a preference.
	Relaxed int
	// Repaired counts the claims the repair after placing emptied, shrank or split (repair.go).
	Repaired int
	// Guide says what the guided packing did (zero when the plan is first-fit's alone).
	Guide GuideStats
	// Bound says how far the proof of LowerBound got (zero with SkipBound).
	Bound BoundStats
	// Gangs says what each gang with pending pods got (gang.go), in order of their names.
	Gangs []GangOutcome
}

// GangOutcome is what a gang got: capacity for Placed of its pending pods (with Running, at
// least its MinCount) in Domain (key=value, "" without a topology key), or none, and why
// (Reason).
type GangOutcome struct {
	Gang
	Pending, Placed, Running int
	Domain                   string
	Reason                   *Reason
}

// Placement is a pod placed on an existing node or in-flight claim.
type Placement struct {
	Pod  *corev1.Pod
	Node string
	// InFlight is true when Node names a NodeClaim that has no node yet.
	InFlight bool
}

// Claim is a new NodeClaim the plan would create.
type Claim struct {
	NodePool string
	// Hostname is the placeholder hostname the solve used for the claim's hostname topology
	// domain; it is unique within the plan.
	Hostname string
	Pods     []*corev1.Pod
	// Requirements are the pool's, narrowed by every pod on the claim, and pinned to the zones
	// and capacity types of the options below. NodeClaimRequirements adds the instance types.
	Requirements scheduling.Requirements
	// InstanceTypes are the types that can hold everything on the claim, cheapest first, at
	// most MaxInstanceTypes.
	InstanceTypes []*catalog.InstanceType
	// CapacityTypes the claim may launch as.
	CapacityTypes []string
	// InstanceType and Offering are what it would launch as: the cheapest usable offering of
	// its options. Price is that offering's price.
	InstanceType *catalog.InstanceType
	Offering     catalog.Offering
	Price        float64
	// Requests is what its pods ask for; DaemonSetOverhead what DaemonSets will add.
	Requests          scheduling.Resources
	DaemonSetOverhead scheduling.Resources
	// MinValuesRelaxed is set when, under the BestEffort minValues policy, Requirements carry a
	// minValues lowered to the distinct values the options have left.
	MinValuesRelaxed bool
}

// NodeClaimRequirements returns the claim's requirements with the instance types pinned to its
// options, as a NodeClaim would carry them.
func (c *Claim) NodeClaimRequirements() scheduling.Requirements {
	names := make([]string, len(c.InstanceTypes))
	for i, it := range c.InstanceTypes {
		names[i] = it.Name
	}
	return c.Requirements.Add(scheduling.In(apisv1.LabelInstanceType, names...))
}

// keepsMinValues reports whether the types hold, for every requirement of reqs with minValues
// on a key the types decide, at least that many distinct values.
func keepsMinValues(reqs scheduling.Requirements, its []*catalog.InstanceType) bool {
	for _, r := range reqs.Items() {
		if r.MinValues <= 0 {
			continue
		}
		seen := map[string]bool{}
		decided := false
		for _, it := range its {
			if tr, ok := it.Requirements.Get(r.Key); ok && !tr.IsComplement() {
				decided = true
				for _, v := range tr.Values() {
					seen[v] = true
				}
			}
		}
		if decided && len(seen) < r.MinValues {
			return false
		}
	}
	return true
}

// Unschedulable is a pod that could not be placed.
type Unschedulable struct {
	Pod     *corev1.Pod
	Reasons []Reason
}

// Message formats the reasons for an event.
func (u Unschedulable) Message() string { return formatReasons(u.Reasons) }

// Narrow keeps only the options keep accepts and re-picks what the claim launches as: the
// cheapest usable offering left. It reports false, leaving the claim as it was, when no option
// is left, or when fewer distinct values of a key would be left than the claim's requirement
// on it asks with minValues. The options are taken to match the claim's requirements, as a
// solve's do.
func (c *Claim) Narrow(keep func(it *catalog.InstanceType, price float64) bool) bool {
	var kept []*catalog.InstanceType
	var best *catalog.InstanceType
	var bestOff catalog.Offering
	q := catalog.NewQuery(c.Requirements)
	for _, it := range c.InstanceTypes {
		i := q.CheapestOffered(it) // the options match the requirements: the solve chose them so
		if i < 0 {
			continue
		}
		o := it.Offerings[i]
		if !keep(it, o.Price) {
			continue
		}
		kept = append(kept, it)
		if best == nil || o.Price < bestOff.Price {
			best, bestOff = it, o
		}
	}
	if len(kept) == 0 || !keepsMinValues(c.Requirements, kept) {
		return false
	}
	c.InstanceTypes, c.InstanceType, c.Offering, c.Price = kept, best, bestOff, bestOff.Price
	return true
}
