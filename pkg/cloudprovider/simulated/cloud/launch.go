package cloud

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// ErrNoCompatibleOffering is wrapped by Launch's error when no offering of the class is
// compatible with the request at all (as opposed to compatible offerings being full).
var ErrNoCompatibleOffering = errors.New("no compatible offering")

// LaunchRequest asks for one instance.
type LaunchRequest struct {
	Class string
	// NodeClaim names the claim the instance is for. A claim that already has an instance
	// that is not Terminated gets that instance back; empty means no such check.
	NodeClaim    string
	Requirements scheduling.Requirements
	// Requests must fit in the instance type's allocatable resources.
	Requests scheduling.Resources
	// Avoid, when set, rules out the offerings it reports true for, as if they had no room:
	// the caller's record of offerings that recently ran out of capacity or were interrupted.
	// Reserved offerings are asked about too (with capacity type reserved).
	Avoid func(cloudprovider.Offering) bool
	// Prices, when set, ranks the offerings instead of their own prices (the prices
	// NodeOverlays set): the launch goes to the first with room in that order.
	Prices cloudprovider.LaunchPrices
	// MIGConfig is the MIG layout of the node's GPUs (catalog.LabelMIGConfig's value): the
	// instance's type is the catalog's partitioned that way (catalog.PartitionGPUs).
	MIGConfig string
}

// candidate is a compatible offering: type it, offering index o.
type candidate struct {
	it *catalog.InstanceType
	o  int
}

// Launch starts an instance at now through the cheapest compatible offering with room (see the
// package doc). Errors: the class is unknown (ErrUnknownClass), nothing is compatible
// (ErrNoCompatibleOffering), or every compatible offering is full or avoided
// (*cloudprovider.InsufficientCapacityError).
func (c *Cloud) Launch(req LaunchRequest, now time.Time) (Instance, error) {
	c.catchUp(now)
	if req.NodeClaim != "" {
		if inst, ok := c.ForClaim(req.NodeClaim); ok {
			return inst, nil
		}
	}
	cls, ok := c.classes[req.Class]
	if !ok {
		return Instance{}, fmt.Errorf("launching: %w %q", ErrUnknownClass, req.Class)
	}
	if _, err := catalog.ParseMIGConfig(req.MIGConfig); err != nil {
		return Instance{}, fmt.Errorf("launching in class %s: %w", req.Class, err)
	}
	cands := cls.candidates(req)
	if len(cands) == 0 {
		return Instance{}, fmt.Errorf("launching in class %s: %w with %s", req.Class, ErrNoCompatibleOffering, req.Requirements)
	}
	for _, cand := range cands {
		off := &cand.it.Offerings[cand.o]
		if req.Avoid != nil && req.Avoid(cloudprovider.Offering{InstanceType: cand.it.Name, Zone: off.Zone, CapacityType: off.CapacityType}) {
			continue
		}
		if !cls.hasRoom(cand.it, off, cls.poolsOf[off], now) {
			continue
		}
		inst := &instance{Instance: Instance{
			ID: c.newID(), Class: req.Class, NodeClaim: req.NodeClaim, Region: cls.cfg.Catalog.Region,
			Type: cand.it, Offering: *off, Launched: now, State: Pending,
		}}
		c.instances[inst.ID] = inst
		c.start(cls, inst, Interruption{})
		c.catchUp(now)
		return inst.Instance, nil
	}
	return Instance{}, &cloudprovider.InsufficientCapacityError{Offerings: tried(cands)}
}

// candidates returns the class's offerings compatible with the request, cheapest first; equal
// prices by type name, then in catalog order.
func (cls *class) candidates(req LaunchRequest) []candidate {
	q := catalog.NewQuery(req.Requirements)
	res, hasRes := req.Requirements.Get(apisv1.LabelCapacityReservationID)
	named := func(id string) bool { return hasRes && !res.IsComplement() && res.Has(id) }
	var out []candidate
	for _, it := range cls.typesFor(req.Requirements) {
		it, _ = catalog.PartitionGPUs(it, req.MIGConfig) // the layout was checked by Launch
		if !q.TypeMatches(it) || !req.Requests.FitsIn(it.Allocatable()) {
			continue
		}
		for o := range it.Offerings {
			off := &it.Offerings[o]
			if !q.OfferingMatches(off) || (cls.targeted[off.ReservationID] && !named(off.ReservationID)) {
				continue
			}
			out = append(out, candidate{it: it, o: o})
		}
	}
	price := func(c candidate) float64 {
		if req.Prices != nil {
			return req.Prices(c.it.Name, &c.it.Offerings[c.o])
		}
		return c.it.Offerings[c.o].Price
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(price(a), price(b)), strings.Compare(a.it.Name, b.it.Name))
	})
	return out
}

// typesFor returns the types worth checking: those an instance-type In requirement names, or
// every type.
func (cls *class) typesFor(reqs scheduling.Requirements) []*catalog.InstanceType {
	r, ok := reqs.Get(apisv1.LabelInstanceType)
	if !ok || r.IsComplement() {
		return cls.cfg.Catalog.Types
	}
	out := make([]*catalog.InstanceType, 0, len(r.Values()))
	for _, name := range r.Values() {
		if it, ok := cls.cfg.Catalog.Get(name); ok {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b *catalog.InstanceType) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// tried names the candidates' offerings, each once, in order.
func tried(cands []candidate) []cloudprovider.Offering {
	out := make([]cloudprovider.Offering, 0, len(cands))
	seen := map[cloudprovider.Offering]bool{}
	for _, cand := range cands {
		off := &cand.it.Offerings[cand.o]
		o := cloudprovider.Offering{InstanceType: cand.it.Name, Zone: off.Zone, CapacityType: off.CapacityType}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}
