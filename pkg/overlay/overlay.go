package overlay

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Pool is one NodePool with the instance types its NodeClass serves.
type Pool struct {
	NodePool *apisv1.NodePool
	Types    []*catalog.InstanceType
}

// Evaluation is the merged effect of a set of NodeOverlays on the instance types of the
// NodePools they were evaluated against. It does not change once built and is safe for
// concurrent use.
type Evaluation struct {
	pools map[string]map[string]*typeUpdate // pool → instance type → update
	// Invalid are the overlays that fail validation, by name, with the reason; they are not
	// applied.
	Invalid map[string]error
	// Conflicts are the overlays not applied because an overlay of the same weight already sets
	// the same offering's price or the same resource of the same instance type, by name, with
	// what they conflict on.
	Conflicts map[string]string
	// Applied names the overlays that change at least one instance type, with how many.
	Applied map[string]int

	// memo holds the copies Apply made, by pool and source type, so that a provider that
	// returns the same types each call gets the same copies back without allocating; it is
	// cleared when it outgrows memoLimit (a provider making fresh types every call).
	mu        sync.Mutex
	memo      map[memoKey]memoEntry
	memoLimit int
}

// memoEntry is a copy with the source offerings it was made from: a provider that updates an
// offering in place (availability, reservation capacity, price) gets a fresh copy.
type memoEntry struct {
	cp   *catalog.InstanceType
	from []catalog.Offering
}

func (m memoEntry) current(it *catalog.InstanceType) bool {
	if len(m.from) != len(it.Offerings) {
		return false
	}
	for i := range m.from {
		a, b := &m.from[i], &it.Offerings[i]
		if a.Price != b.Price || a.Available != b.Available || a.ReservationCapacity != b.ReservationCapacity {
			return false
		}
	}
	return true
}

type memoKey struct {
	pool string
	it   *catalog.InstanceType
}

// typeUpdate is what the overlays do to one instance type of one pool.
type typeUpdate struct {
	// price holds, per offering (by offeringKey), the winning change and whose it is.
	price map[offeringKey]*priceUpdate
	// capacity holds, per resource slot, the winning amount.
	capacity map[int]int64
	// capacityWeight and capacityResources are those of the last overlay that set capacity:
	// an overlay of the same weight on one of the same resources conflicts with it.
	capacityWeight    int32
	capacityResources map[int]bool
	capacityBy        string
	capacitySet       bool
}

type priceUpdate struct {
	change change
	// lowest is the weight of the last (lightest) overlay that selected the offering, and by
	// whom: an overlay of that weight conflicts with it.
	lowest   int32
	lowestBy string
}

// offeringKey names an offering of a type.
type offeringKey struct {
	zone, capacityType, reservation string
}

func keyOf(o *catalog.Offering) offeringKey {
	return offeringKey{zone: o.Zone, capacityType: o.CapacityType, reservation: o.ReservationID}
}

// change is a parsed price or priceAdjustment.
type change struct {
	// fixed sets the price to value; otherwise percent says whether value is a percentage
	// or an amount to add.
	fixed, percent bool
	value          float64
}

func (c change) apply(price float64) float64 {
	switch {
	case c.fixed:
		return c.value
	case c.percent:
		price *= 1 + c.value/100
	default:
		price += c.value
	}
	return max(price, 0)
}

var (
	pricePattern      = regexp.MustCompile(`^\d+(\.\d+)?$`)
	adjustmentPattern = regexp.MustCompile(`^(([+-]\d*\.?\d+)|(\+\d*\.?\d+%)|(-\d{1,2}(\.\d+)?%)|(-100%))$`)
)

// parsed is a valid overlay, ready to match.
type parsed struct {
	name   string
	weight int32
	// typeReqs are the requirements on labels the type (or the pool) decides, offeringReqs
	// those on labels each offering decides (zone, zone ID, capacity type, reservation).
	typeReqs, offeringReqs []scheduling.Requirement
	price                  *change
	capacity               map[int]int64
}

// restrictedCapacity are the resources an overlay may not change.
var restrictedCapacity = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods}

// Validate checks what the CRD schema cannot (or what was never checked, for an overlay read
// from a file): that its requirements parse, that its price is a number, and that its capacity
// names only extended resources with non-negative amounts. The error names every problem.
func Validate(o *v1alpha1.NodeOverlay) error {
	_, err := parse(o)
	return err
}

func parse(o *v1alpha1.NodeOverlay) (*parsed, error) {
	p := &parsed{name: o.Name, weight: o.WeightOf()}
	var reqs scheduling.Requirements
	var errs []error
	if w := o.WeightOf(); o.Spec.Weight != nil && (w < 1 || w > 10000) {
		errs = append(errs, fmt.Errorf("weight %d is outside 1 to 10000", w))
	}
	for i, r := range o.Spec.Requirements {
		req, err := scheduling.NewRequirement(scheduling.NormalizeKey(r.Key), r.Operator, r.Values...)
		if err != nil {
			errs = append(errs, fmt.Errorf("requirement %d (%s): %w", i, r.Key, err))
			continue
		}
		if r.Operator == corev1.NodeSelectorOpNotIn && len(r.Values) == 0 {
			errs = append(errs, fmt.Errorf("requirement %d: key %s with operator NotIn must have a value defined", i, r.Key))
			continue
		}
		reqs = reqs.Add(req)
	}
	switch {
	case o.Spec.Price != nil && o.Spec.PriceAdjustment != nil:
		errs = append(errs, errors.New("cannot set both 'price' and 'priceAdjustment'"))
	case o.Spec.Price != nil:
		c, err := parseChange(*o.Spec.Price, true)
		if err != nil {
			errs = append(errs, fmt.Errorf("price: %w", err))
		}
		p.price = &c
	case o.Spec.PriceAdjustment != nil:
		c, err := parseChange(*o.Spec.PriceAdjustment, false)
		if err != nil {
			errs = append(errs, fmt.Errorf("priceAdjustment: %w", err))
		}
		p.price = &c
	}
	names := make([]corev1.ResourceName, 0, len(o.Spec.Capacity))
	for name := range o.Spec.Capacity {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if slices.Contains(restrictedCapacity, name) {
			errs = append(errs, fmt.Errorf("invalid capacity: %s in resource, restricted", name))
			continue
		}
		slot, err := scheduling.InternResource(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("capacity %s: %w", name, err))
			continue
		}
		v, _, err := scheduling.Amount(slot, o.Spec.Capacity[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("capacity %s: %w", name, err))
			continue
		}
		if p.capacity == nil {
			p.capacity = map[int]int64{}
		}
		p.capacity[slot] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, r := range reqs.Items() {
		if offeringDecides(r.Key) {
			p.offeringReqs = append(p.offeringReqs, r)
		} else {
			p.typeReqs = append(p.typeReqs, r)
		}
	}
	return p, nil
}

func parseChange(s string, fixed bool) (change, error) {
	if fixed && !pricePattern.MatchString(s) {
		return change{}, fmt.Errorf("%q is not a price: want a non-negative decimal such as 0.25", s)
	}
	if !fixed && !adjustmentPattern.MatchString(s) {
		return change{}, fmt.Errorf("%q is not a price adjustment: want a signed amount (+0.1, -0.05) or percentage (+10%%, -15%%, at least -100%%)", s)
	}
	c := change{fixed: fixed, percent: strings.HasSuffix(s, "%")}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return change{}, fmt.Errorf("%q is out of range", s)
	}
	c.value = v
	return c, nil
}

// Evaluate merges overlays over pools, as Karpenter does: overlays are taken heaviest first
// (among equal weights, by name in reverse alphabetical order); for each offering, the first
// overlay that sets a price wins, and for each resource of each type, the first that sets it
// wins. An overlay of the same weight as the last one to select the same offering's price (or
// the same resource of the same type) conflicts with it and is applied nowhere: no pool gets
// part of an overlay. An invalid overlay is applied nowhere either.
//
// An overlay applies to an offering of an instance type in a pool when a node bought through
// that offering would carry labels satisfying every requirement: the type's labels, the
// offering's zone, zone ID, capacity type and reservation ID, the NodePool's name
// (karpenter.sh/nodepool) and its template's labels.
func Evaluate(overlays []*v1alpha1.NodeOverlay, pools []Pool) *Evaluation {
	e := &Evaluation{pools: map[string]map[string]*typeUpdate{}, Invalid: map[string]error{}, Conflicts: map[string]string{}, Applied: map[string]int{}}
	for _, p := range pools {
		e.pools[p.NodePool.Name] = map[string]*typeUpdate{}
		e.memoLimit += 4 * len(p.Types)
	}
	ordered := slices.Clone(overlays)
	v1alpha1.OrderByWeight(ordered)
	for _, o := range ordered {
		p, err := parse(o)
		if err != nil {
			e.Invalid[o.Name] = err
			continue
		}
		if p.price == nil && len(p.capacity) == 0 {
			continue // it changes nothing
		}
		var hits []hit
		conflict := ""
		for _, pool := range pools {
			labels := poolLabels(pool.NodePool)
			for _, it := range pool.Types {
				offerings := p.matching(it, labels)
				if len(offerings) == 0 {
					continue
				}
				if c := e.conflict(p, pool.NodePool.Name, it, offerings); c != "" {
					conflict = c
					break
				}
				hits = append(hits, hit{pool: pool.NodePool.Name, it: it, offerings: offerings})
			}
			if conflict != "" {
				break
			}
		}
		if conflict != "" {
			e.Conflicts[o.Name] = conflict
			continue
		}
		for _, h := range hits {
			e.store(p, h)
		}
		if len(hits) > 0 {
			e.Applied[o.Name] = len(hits)
		}
	}
	return e
}

type hit struct {
	pool      string
	it        *catalog.InstanceType
	offerings []int
}

// poolLabels are the labels every node of the pool carries beyond its type's and offering's.
func poolLabels(np *apisv1.NodePool) map[string]string {
	l := map[string]string{apisv1.NodePoolLabelKey: np.Name}
	for k, v := range np.Spec.Template.Labels {
		l[k] = v
	}
	return l
}

// matching returns the indices of the type's offerings the overlay selects: the requirements on
// keys an offering decides are read per offering, the others once for the type.
func (p *parsed) matching(it *catalog.InstanceType, pool map[string]string) []int {
	for _, r := range p.typeReqs {
		v, present := typeLabel(it, pool, r.Key)
		if !r.Matches(v, present) {
			return nil
		}
	}
	var out []int
	for i := range it.Offerings {
		o := &it.Offerings[i]
		ok := true
		for _, r := range p.offeringReqs {
			v, present, _ := o.Label(r.Key)
			if !r.Matches(v, present) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// offeringDecides reports whether the offering, not the type, decides a label (catalog's rule).
func offeringDecides(key string) bool {
	_, _, decides := (&catalog.Offering{}).Label(key)
	return decides
}

// typeLabel returns the value of a label, not decided by the offering, of a node of type it in
// a pool.
func typeLabel(it *catalog.InstanceType, pool map[string]string, key string) (string, bool) {
	if v, ok := pool[key]; ok {
		return v, true
	}
	if v, ok := it.Label(key); ok {
		return v, true
	}
	// Types built without a label map (synthetic catalogs) decide their labels by
	// single-valued requirements.
	if r, ok := it.Requirements.Get(key); ok && !r.IsComplement() && len(r.Values()) == 1 {
		return r.Values()[0], true
	}
	return "", false
}

// conflict says what the overlay conflicts on in one type of one pool, or "".
func (e *Evaluation) conflict(p *parsed, pool string, it *catalog.InstanceType, offerings []int) string {
	u := e.pools[pool][it.Name]
	if u == nil {
		return ""
	}
	if p.price != nil {
		for _, i := range offerings {
			if pu := u.price[keyOf(&it.Offerings[i])]; pu != nil && pu.lowest == p.weight {
				o := &it.Offerings[i]
				return fmt.Sprintf("conflicts with nodeoverlay %s (weight %d) on the price of %s %s in %s, nodepool %s", pu.lowestBy, p.weight, it.Name, o.CapacityType, o.Zone, pool)
			}
		}
	}
	if len(p.capacity) > 0 && u.capacitySet && u.capacityWeight == p.weight {
		for slot := range p.capacity {
			if u.capacityResources[slot] {
				return fmt.Sprintf("conflicts with nodeoverlay %s (weight %d) on the capacity %s of %s, nodepool %s", u.capacityBy, p.weight, scheduling.ResourceNameAt(slot), it.Name, pool)
			}
		}
	}
	return ""
}

// store records what a valid, conflict-free overlay does to one type of one pool.
func (e *Evaluation) store(p *parsed, h hit) {
	u := e.pools[h.pool][h.it.Name]
	if u == nil {
		u = &typeUpdate{}
		e.pools[h.pool][h.it.Name] = u
	}
	if p.price != nil {
		if u.price == nil {
			u.price = map[offeringKey]*priceUpdate{}
		}
		for _, i := range h.offerings {
			k := keyOf(&h.it.Offerings[i])
			if pu := u.price[k]; pu != nil {
				pu.lowest, pu.lowestBy = p.weight, p.name // a heavier overlay already set it
				continue
			}
			u.price[k] = &priceUpdate{change: *p.price, lowest: p.weight, lowestBy: p.name}
		}
	}
	if len(p.capacity) > 0 {
		if u.capacity == nil {
			u.capacity = map[int]int64{}
		}
		for slot, v := range p.capacity {
			if _, set := u.capacity[slot]; !set {
				u.capacity[slot] = v
			}
		}
		u.capacitySet, u.capacityWeight, u.capacityBy = true, p.weight, p.name
		u.capacityResources = map[int]bool{}
		for slot := range p.capacity {
			u.capacityResources[slot] = true
		}
	}
}

// NotEvaluatedError is returned for a NodePool the evaluation did not see: its instance
// types cannot be given with their overlays until the overlays are evaluated against it.
type NotEvaluatedError struct{ NodePool string }

func (e *NotEvaluatedError) Error() string {
	return fmt.Sprintf("nodeoverlays are not evaluated for nodepool %s yet", e.NodePool)
}

// Evaluated reports whether the evaluation covers the pool.
func (e *Evaluation) Evaluated(pool string) bool {
	_, ok := e.pools[pool]
	return ok
}

// Apply returns the pool's instance types with the overlays applied: a type an overlay changes
// is a copy (with its own offerings), the others are returned as they are. The types given are
// never modified. Prices are adjusted from the prices given, so a price the cloud updates
// after the evaluation is adjusted too; offerings and types the evaluation did not see are
// returned unchanged.
func (e *Evaluation) Apply(pool string, types []*catalog.InstanceType) ([]*catalog.InstanceType, error) {
	updates, ok := e.pools[pool]
	if !ok {
		return nil, &NotEvaluatedError{NodePool: pool}
	}
	if len(updates) == 0 {
		return types, nil
	}
	out := make([]*catalog.InstanceType, len(types))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.memo == nil || len(e.memo) > e.memoLimit {
		e.memo = map[memoKey]memoEntry{}
	}
	for i, it := range types {
		out[i] = it
		if u := updates[it.Name]; u != nil {
			k := memoKey{pool, it}
			m, ok := e.memo[k]
			if !ok || !m.current(it) {
				m = memoEntry{cp: u.apply(it), from: slices.Clone(it.Offerings)}
				e.memo[k] = m
			}
			out[i] = m.cp
		}
	}
	return out, nil
}

func (u *typeUpdate) apply(it *catalog.InstanceType) *catalog.InstanceType {
	cp := *it
	if len(u.price) > 0 {
		cp.Offerings = slices.Clone(it.Offerings)
		for i := range cp.Offerings {
			o := &cp.Offerings[i]
			if pu := u.price[keyOf(o)]; pu != nil {
				o.Price = pu.change.apply(o.Price)
			}
		}
	}
	for slot, v := range u.capacity {
		cp.Capacity[slot] = v
		// Hugepages are carved out of the node's memory: what they take, pods cannot.
		if strings.HasPrefix(string(scheduling.ResourceNameAt(slot)), corev1.ResourceHugePagesPrefix) {
			cp.Capacity[scheduling.Memory] = max(scheduling.SatSub(cp.Capacity[scheduling.Memory], v-it.Capacity[slot]), 0)
		}
	}
	return &cp
}

// PricesOffers reports whether an overlay sets the price of some offering in the pool.
func (e *Evaluation) PricesOffers(pool string) bool {
	for _, u := range e.pools[pool] {
		if len(u.price) > 0 {
			return true
		}
	}
	return false
}

// Price returns the overlaid price of an offering of an instance type in a pool (the
// offering's own price when no overlay sets it).
func (e *Evaluation) Price(pool, instanceType string, o *catalog.Offering) float64 {
	if u := e.pools[pool][instanceType]; u != nil {
		if pu := u.price[keyOf(o)]; pu != nil {
			return pu.change.apply(o.Price)
		}
	}
	return o.Price
}
