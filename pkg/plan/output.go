package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/tenon-sh/tenon/pkg/commitment"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Result is the JSON form of a plan: the stable schema `tenon plan -o json` prints.
type Result struct {
	Claims        []Claim         `json:"claims"`
	Placements    []Placement     `json:"placements"`
	Unschedulable []Unschedulable `json:"unschedulable"`
	// TotalPrice is the $/h of the new claims; LowerBound a proven floor under it; CostOverBound
	// their ratio (1 when both are 0, 0 when only the bound is: no finite ratio exists).
	TotalPrice    float64 `json:"totalPrice"`
	LowerBound    float64 `json:"lowerBound"`
	CostOverBound float64 `json:"costOverBound"`
	// Relaxed counts pods placed after a preference of theirs was dropped.
	Relaxed int `json:"relaxed"`
	// Bound says how far the proof of LowerBound got, when it was cut short by its budget or
	// proven on merged classes (absent otherwise: the bound is the LP's over the pods as they are).
	Bound *Bound `json:"bound,omitempty"`
	// Gangs are the PodGroups with a gang policy and pending pods: what each got.
	Gangs []Gang `json:"gangs,omitempty"`
	// Bill is the hourly bill of the existing nodes and the new ones under the manifests'
	// Commitments (absent without any). TotalPrice is then what the new nodes add to it.
	Bill *Bill `json:"bill,omitempty"`
}

// Bill is a fleet's hourly bill with commitments.
type Bill struct {
	// Commitment is what the active Commitments cost whether used or not; Overage the usage
	// they do not cover, at list prices; Total their sum.
	Commitment float64 `json:"commitment"`
	Overage    float64 `json:"overage"`
	Total      float64 `json:"total"`
	// Coverage is the share of the on-demand usage (at on-demand prices) commitments cover.
	Coverage    float64         `json:"coverage"`
	Commitments []CommitmentUse `json:"commitments"`
}

// CommitmentUse is how much of one Commitment the fleet uses.
type CommitmentUse struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	Utilization float64 `json:"utilization"`
	Covered     int     `json:"coveredInstances"`
}

// SetBill records the bill of a book.
func (r *Result) SetBill(b commitment.Bill, book *commitment.Book) {
	out := &Bill{Commitment: round(b.Fixed), Overage: round(b.Overage), Total: round(b.Total)}
	if b.OnDemand > 0 {
		out.Coverage = round(b.CoveredOnDemand / b.OnDemand)
	}
	util := book.Utilization(b)
	for i, c := range book.Commitments() {
		out.Commitments = append(out.Commitments, CommitmentUse{Name: c.Name, Kind: c.Kind.String(), Utilization: round(util[i]), Covered: b.Covered[i]})
	}
	r.Bill = out
}

// Gang is what a PodGroup with a gang policy got: capacity for Placed of its Pending pods in
// Domain (key=value, when the group has a topology constraint), or none, and why.
type Gang struct {
	Name     string `json:"name"`
	MinCount int    `json:"minCount"`
	Pending  int    `json:"pending"`
	Running  int    `json:"running"`
	Placed   int    `json:"placed"`
	Domain   string `json:"domain,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Bound is how tight the lower bound got.
type Bound struct {
	// Stopped says --bound-budget ran out before the LPs finished: a larger budget may raise
	// the bound. Iterations are the column-generation rounds it ran.
	Stopped    bool `json:"stopped"`
	Iterations int  `json:"iterations"`
	// Classes are the pod classes, Rows the rows of the LPs, Relaxation how classes were
	// merged (requests rounded down) or, as solver.RelaxationCounting, that the joint cover of
	// every pod's exact request proved more than they did; RoundingLoss the share of the demand
	// the merge took away.
	Classes      int     `json:"classes"`
	Rows         int     `json:"rows"`
	Relaxation   string  `json:"relaxation"`
	RoundingLoss float64 `json:"roundingLoss"`
}

// Claim is one new NodeClaim.
type Claim struct {
	NodePool     string `json:"nodePool"`
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	CapacityType string `json:"capacityType"`
	// ReservationID is set when the claim launches into reserved capacity.
	ReservationID string  `json:"reservationID,omitempty"`
	Price         float64 `json:"price"`
	// Pods are namespace/name.
	Pods []string `json:"pods"`
	// InstanceTypeOptions is how many types the claim allows (cheapest first, the first launched).
	InstanceTypeOptions int `json:"instanceTypeOptions"`
	// Requests are what its pods and DaemonSets ask of the node, as quantities.
	Requests map[string]string `json:"requests"`
}

// Placement is a pending pod planned onto an existing node or in-flight claim.
type Placement struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// Unschedulable is a pod that cannot be placed, with the reason for each NodePool.
type Unschedulable struct {
	Pod     string          `json:"pod"`
	Reason  string          `json:"reason"`
	Reasons []solver.Reason `json:"reasons"`
}

// NewResult converts a plan; rejected are pods that could not be given to the solver (see
// Input.Rejected), listed after the plan's unschedulable pods.
func NewResult(p *solver.Plan, rejected ...solver.Unschedulable) *Result {
	r := &Result{TotalPrice: round(p.Price), LowerBound: round(p.LowerBound), Relaxed: p.Relaxed, CostOverBound: 1}
	if p.LowerBound > 0 {
		r.CostOverBound = round(p.Price / p.LowerBound)
	} else if p.Price > 0 {
		r.CostOverBound = 0 // JSON has no infinity
	}
	if b := p.Bound; b.Stopped || b.Relaxation != "" && b.Relaxation != "exact" {
		r.Bound = &Bound{Stopped: b.Stopped, Iterations: b.Iterations, Classes: b.Classes, Rows: b.Rows,
			Relaxation: b.Relaxation, RoundingLoss: round(b.RoundingLoss)}
	}
	r.Claims = make([]Claim, 0, len(p.Claims))
	for _, c := range p.Claims {
		cl := Claim{
			NodePool: c.NodePool, InstanceType: c.InstanceType.Name, Zone: c.Offering.Zone,
			CapacityType: c.Offering.CapacityType, ReservationID: c.Offering.ReservationID,
			Price: round(c.Price), InstanceTypeOptions: len(c.InstanceTypes), Requests: map[string]string{},
		}
		for _, pod := range c.Pods {
			cl.Pods = append(cl.Pods, snapshot.PodKey(pod))
		}
		for name, q := range c.Requests.Add(c.DaemonSetOverhead).ResourceList() {
			cl.Requests[string(name)] = q.String()
		}
		r.Claims = append(r.Claims, cl)
	}
	for _, g := range p.Gangs {
		out := Gang{Name: g.Namespace + "/" + g.Name, MinCount: g.MinCount, Pending: g.Pending, Running: g.Running, Placed: g.Placed, Domain: g.Domain}
		if g.Reason != nil {
			out.Reason = g.Reason.String()
		}
		r.Gangs = append(r.Gangs, out)
	}
	r.Placements = make([]Placement, 0, len(p.Placements))
	for _, pl := range p.Placements {
		r.Placements = append(r.Placements, Placement{Pod: snapshot.PodKey(pl.Pod), Node: pl.Node})
	}
	r.Unschedulable = make([]Unschedulable, 0, len(p.Unschedulable)+len(rejected))
	for _, u := range append(slices.Clip(p.Unschedulable), rejected...) {
		r.Unschedulable = append(r.Unschedulable, Unschedulable{Pod: snapshot.PodKey(u.Pod), Reason: u.Message(), Reasons: u.Reasons})
	}
	return r
}

func round(f float64) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	return math.Round(f*1e6) / 1e6
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the result for a person: the claims grouped by shape, the placements, the
// unschedulable pods with reasons, and the totals.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	type group struct {
		Claim
		count, pods int
	}
	groups := map[string]*group{}
	var order []string
	for _, c := range r.Claims {
		k := strings.Join([]string{c.NodePool, c.InstanceType, c.Zone, c.CapacityType, c.ReservationID}, "\x00")
		g, ok := groups[k]
		if !ok {
			g = &group{Claim: c}
			groups[k] = g
			order = append(order, k)
		}
		g.count++
		g.pods += len(c.Pods)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := groups[order[i]], groups[order[j]]
		return a.Price*float64(a.count) > b.Price*float64(b.count)
	})
	fmt.Fprintf(tw, "NODEPOOL\tINSTANCE TYPE\tZONE\tCAPACITY\tNODES\t$/H EACH\t$/H\tPODS\n")
	for _, k := range order {
		g := groups[k]
		ct := g.CapacityType
		if g.ReservationID != "" {
			ct += " (" + g.ReservationID + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.4f\t%.4f\t%d\n", g.NodePool, g.InstanceType, g.Zone, ct, g.count, g.Price, g.Price*float64(g.count), g.pods)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Placements) > 0 {
		byNode := map[string]int{}
		for _, p := range r.Placements {
			byNode[p.Node]++
		}
		nodes := make([]string, 0, len(byNode))
		for n := range byNode {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
		fmt.Fprintf(w, "\n%d pods fit on existing nodes:", len(r.Placements))
		for _, n := range nodes {
			fmt.Fprintf(w, " %s (%d)", n, byNode[n])
		}
		fmt.Fprintln(w)
	}
	if len(r.Gangs) > 0 {
		fmt.Fprintf(w, "\ngangs:\n")
		for _, g := range r.Gangs {
			switch {
			case g.Reason != "":
				fmt.Fprintf(w, "  %s (minCount %d): no capacity for its %d pending pods\n", g.Name, g.MinCount, g.Pending)
			case g.Domain != "":
				fmt.Fprintf(w, "  %s (minCount %d): %d of %d pending pods placed, %d running, in %s\n", g.Name, g.MinCount, g.Placed, g.Pending, g.Running, g.Domain)
			default:
				fmt.Fprintf(w, "  %s (minCount %d): %d of %d pending pods placed, %d running\n", g.Name, g.MinCount, g.Placed, g.Pending, g.Running)
			}
		}
	}
	if len(r.Unschedulable) > 0 {
		fmt.Fprintf(w, "\n%d pods cannot be scheduled:\n", len(r.Unschedulable))
		for _, u := range r.Unschedulable {
			fmt.Fprintf(w, "  %s: %s\n", u.Pod, u.Reason)
		}
	}
	ratio := "n/a"
	if r.LowerBound > 0 {
		ratio = fmt.Sprintf("%.3f", r.CostOverBound)
	}
	fmt.Fprintf(w, "\n%d new nodes, $%.4f/h; lower bound $%.4f/h (cost/bound %s)", len(r.Claims), r.TotalPrice, r.LowerBound, ratio)
	if r.Relaxed > 0 {
		fmt.Fprintf(w, "; %d pods placed after relaxing a preference", r.Relaxed)
	}
	fmt.Fprintln(w)
	if b := r.Bound; b != nil {
		switch {
		case b.Relaxation == solver.RelaxationCounting:
			fmt.Fprintf(w, "bound: %d pod classes, %s (the LPs over %d merged rows proved less)", b.Classes, b.Relaxation, b.Rows)
		case b.Relaxation != "" && b.Relaxation != "exact":
			fmt.Fprintf(w, "bound: %d pod classes as %d LP rows (%s, %.1f%% of the demand rounded away)", b.Classes, b.Rows, b.Relaxation, 100*b.RoundingLoss)
		default:
			fmt.Fprintf(w, "bound: %d pod classes as %d LP rows", b.Classes, b.Rows)
		}
		if b.Stopped {
			fmt.Fprintf(w, "; the bound budget ran out after %d rounds, a larger --bound-budget may raise it", b.Iterations)
		}
		fmt.Fprintln(w)
	}
	if b := r.Bill; b != nil {
		fmt.Fprintf(w, "bill with commitments, existing and new nodes: $%.4f/h = $%.4f/h committed + $%.4f/h beyond; %.1f%% of on-demand usage covered\n",
			b.Total, b.Commitment, b.Overage, 100*b.Coverage)
		for _, c := range b.Commitments {
			fmt.Fprintf(w, "  %s (%s): %.1f%% used, %d instances covered\n", c.Name, c.Kind, 100*c.Utilization, c.Covered)
		}
	}
	return nil
}
