package aws

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/launchtemplate"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/userdata"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// GetInstanceTypes returns the types the NodePool's EC2NodeClass may launch: the instance
// types' List for it, less the types no AMI of its status can boot.
func (p *Provider) GetInstanceTypes(ctx context.Context, np *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	nc, err := p.nodeClass(ctx, np.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	types, amis, err := p.launchable(ctx, nc)
	if err != nil {
		return nil, err
	}
	out := make([]*catalog.InstanceType, 0, len(types))
	for i, it := range types {
		if amis[i] != nil {
			out = append(out, it)
		}
	}
	// The pool's nodes have their GPUs in the pool's MIG layout, if it has one.
	return catalog.PartitionPool(out, np.Name, np.Spec.Template.Labels)
}

// launchable lists nc's types and, for each, the AMI it boots (nil for none): the first of
// the status AMIs not deprecated whose requirements the type meets, else the first
// deprecated one that fits.
func (p *Provider) launchable(ctx context.Context, nc *awsv1.EC2NodeClass) ([]*catalog.InstanceType, []*awsv1.AMI, error) {
	types, err := p.types.List(ctx, nc)
	if err != nil {
		return nil, nil, err
	}
	reqs := make([]scheduling.Requirements, len(nc.Status.AMIs))
	for i := range nc.Status.AMIs {
		r, err := scheduling.FromNodeSelectorRequirements(nc.Status.AMIs[i].Requirements...)
		if err != nil {
			return nil, nil, &cloudprovider.NodeClassNotReadyError{NodeClass: nc.Name, Reason: fmt.Sprintf("AMI %s has bad requirements: %v", nc.Status.AMIs[i].ID, err)}
		}
		reqs[i] = r
	}
	amis := make([]*awsv1.AMI, len(types))
	for t, it := range types {
		for _, deprecated := range []bool{false, true} {
			for i := range nc.Status.AMIs {
				ami := &nc.Status.AMIs[i]
				if ami.Deprecated == deprecated && scheduling.Compatible(it.Requirements, reqs[i], scheduling.AllowUndefinedWellKnown) == nil {
					amis[t] = ami
					break
				}
			}
			if amis[t] != nil {
				break
			}
		}
	}
	return types, amis, nil
}

// candidate is one usable offering of a type, with the AMI that boots it.
type candidate struct {
	it  *catalog.InstanceType
	off *catalog.Offering
	ami *awsv1.AMI
	// price ranks the candidate: the offering's price, or the one NodeOverlays set
	// (cloudprovider.LaunchPrices).
	price float64
}

// Create launches an instance for the claim (see cloudprovider.CloudProvider). A claim that
// already has a running or pending instance (found by its karpenter.sh/nodeclaim tag) gets it
// back and nothing is launched. Otherwise the claim's compatible offerings that have room and
// are not marked unavailable are sorted by price; the capacity type is reserved when a
// reservation fits, else spot when allowed and offered, else on-demand; one CreateFleet call
// tries them through one launch template per AMI (and per reservation).
func (p *Provider) Create(ctx context.Context, claim *apisv1.NodeClaim) (*apisv1.NodeClaim, error) {
	nc, err := p.nodeClass(ctx, claim.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	types, amis, err := p.launchable(ctx, nc)
	if err != nil {
		return nil, err
	}
	// The node's GPUs will be in the MIG layout its labels name (the NodePool's).
	if types, err = catalog.PartitionAll(types, claim.Labels[catalog.LabelMIGConfig]); err != nil {
		return nil, fmt.Errorf("NodeClaim %s: %w", claim.Name, err)
	}
	typeOf := func(name string) *catalog.InstanceType {
		for _, it := range types {
			if it.Name == name {
				return it
			}
		}
		return nil
	}
	existing, err := p.instances.FindByClaim(ctx, claim.Name)
	if err != nil {
		return nil, fmt.Errorf("NodeClaim %s: looking for its instance: %w", claim.Name, err)
	}
	if existing != nil {
		return p.view(claim, existing, nc, typeOf(existing.Type)), nil
	}
	reqs, requests, err := cloudprovider.ClaimRequest(claim)
	if err != nil {
		return nil, fmt.Errorf("NodeClaim %s: %w", claim.Name, err)
	}
	q := catalog.NewQuery(reqs)
	prices := cloudprovider.LaunchPricesFrom(ctx)
	var cands []candidate
	var avoided []cloudprovider.Offering
	for t, it := range types {
		if amis[t] == nil || !q.TypeMatches(it) || !requests.FitsIn(it.Allocatable()) {
			continue
		}
		for i := range it.Offerings {
			off := &it.Offerings[i]
			if !off.Usable() || !q.OfferingMatches(off) {
				continue
			}
			if p.unavailable != nil && p.unavailable.IsUnavailable(it.Name, off.Zone, off.CapacityType) {
				avoided = append(avoided, cloudprovider.Offering{InstanceType: it.Name, Zone: off.Zone, CapacityType: off.CapacityType})
				continue
			}
			price := off.Price
			if prices != nil {
				price = prices(it.Name, off)
			}
			cands = append(cands, candidate{it: it, off: off, ami: amis[t], price: price})
		}
	}
	if len(cands) == 0 {
		if len(avoided) > 0 {
			return nil, &cloudprovider.InsufficientCapacityError{Offerings: avoided}
		}
		return nil, fmt.Errorf("NodeClaim %s: no instance type of EC2NodeClass %s satisfies its requirements %s and requests", claim.Name, nc.Name, reqs)
	}
	capacityType := chooseCapacityType(cands)
	cands = slices.DeleteFunc(cands, func(c candidate) bool { return c.off.CapacityType != capacityType })
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.price, b.price), strings.Compare(a.it.Name, b.it.Name))
	})
	if capacityType == apisv1.CapacityTypeReserved {
		// One fleet launches one kind of reservation: a capacity block or an ordinary one.
		kind := reservationType(nc, cands[0].off.ReservationID)
		cands = slices.DeleteFunc(cands, func(c candidate) bool { return reservationType(nc, c.off.ReservationID) != kind })
	}
	req, byName, err := p.launchRequest(ctx, claim, nc, capacityType, cands)
	if err != nil {
		return nil, err
	}
	heard := func(offerings []cloudprovider.Offering) { p.markUnavailable(ctx, offerings) }
	inst, err := p.instances.Launch(ctx, req, heard)
	if launchtemplate.IsNotFound(err) {
		// A template was deleted behind the cache's back: make it again, once.
		for name := range byName {
			p.templates.Invalidate(name)
		}
		if req, byName, err = p.launchRequest(ctx, claim, nc, capacityType, cands); err != nil {
			return nil, err
		}
		inst, err = p.instances.Launch(ctx, req, heard)
	}
	if err != nil {
		return nil, fmt.Errorf("NodeClaim %s: %w", claim.Name, err)
	}
	return p.view(claim, inst, nc, typeOf(inst.Type)), nil
}

// chooseCapacityType picks reserved when any candidate is reserved, else spot when any is
// spot, else on-demand.
func chooseCapacityType(cands []candidate) string {
	has := func(ct string) bool {
		return slices.ContainsFunc(cands, func(c candidate) bool { return c.off.CapacityType == ct })
	}
	switch {
	case has(apisv1.CapacityTypeReserved):
		return apisv1.CapacityTypeReserved
	case has(apisv1.CapacityTypeSpot):
		return apisv1.CapacityTypeSpot
	}
	return apisv1.CapacityTypeOnDemand
}

// markUnavailable passes the offerings a fleet found without capacity to the caller's
// capacity report (the lifecycle controller marks them and records an event on the claim),
// or, when the caller attached none, marks them in Options.Unavailable itself.
func (p *Provider) markUnavailable(ctx context.Context, offerings []cloudprovider.Offering) {
	if cloudprovider.ReportInsufficientCapacity(ctx, offerings) || p.unavailable == nil {
		return
	}
	for _, o := range offerings {
		p.unavailable.MarkUnavailable(o, "InsufficientCapacity", p.ttl)
	}
}

// launchRequest ensures the launch templates of the candidates (one per AMI, and per
// reservation for reserved launches) and builds the fleet request; it returns the templates
// by name too.
func (p *Provider) launchRequest(ctx context.Context, claim *apisv1.NodeClaim, nc *awsv1.EC2NodeClass, capacityType string, cands []candidate) (instance.LaunchRequest, map[string]bool, error) {
	type group struct {
		ami         *awsv1.AMI
		reservation string
	}
	var order []group
	byGroup := map[group][]instance.Candidate{}
	for _, c := range cands {
		g := group{ami: c.ami, reservation: c.off.ReservationID}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], instance.Candidate{InstanceType: c.it.Name, Zone: c.off.Zone, Price: c.price, ReservationID: c.off.ReservationID})
	}
	classTags := p.classTags(nc)
	ud, err := userdata.Render(nc.AMIFamily(), p.cluster, p.node(claim, nc, capacityType))
	if err != nil {
		return instance.LaunchRequest{}, nil, fmt.Errorf("EC2NodeClass %s: %w", nc.Name, err)
	}
	var sgs []string
	for _, sg := range nc.Status.SecurityGroups {
		sgs = append(sgs, sg.ID)
	}
	req := instance.LaunchRequest{CapacityType: capacityType, Tags: p.instanceTags(claim, nc, classTags),
		Prioritized: cloudprovider.LaunchPricesFrom(ctx) != nil}
	if nc.Spec.Context != nil {
		req.Context = *nc.Spec.Context
	}
	names := map[string]bool{}
	total := 0
	for _, g := range order {
		spec := launchtemplate.Spec{
			NodeClass: nc, NodeClassHash: nc.Hash(p.cluster.CABundle), ImageID: g.ami.ID, UserData: ud,
			SecurityGroups: sgs, InstanceProfile: nc.Status.InstanceProfile, CapacityType: capacityType,
			ReservationID: g.reservation, Tags: classTags,
		}
		if g.reservation != "" {
			spec.ReservationType = reservationType(nc, g.reservation)
			req.ReservationType = spec.ReservationType
		}
		overrides := instance.Overrides(byGroup[g], nc.Status.Subnets, g.ami.ID, p.instances.SubnetFull)
		if len(overrides) == 0 || total >= instance.MaxOverrides {
			continue
		}
		if len(overrides) > instance.MaxOverrides-total {
			overrides = overrides[:instance.MaxOverrides-total]
		}
		total += len(overrides)
		name, err := p.templates.Ensure(ctx, spec)
		if err != nil {
			return instance.LaunchRequest{}, nil, err
		}
		names[name] = true
		req.Configs = append(req.Configs, instance.LaunchConfig{TemplateName: name, Overrides: overrides})
	}
	if len(req.Configs) == 0 {
		return instance.LaunchRequest{}, nil, fmt.Errorf("NodeClaim %s: no subnet of EC2NodeClass %s is in the zones of its compatible offerings", claim.Name, nc.Name)
	}
	return req, names, nil
}

// reservationType is the type of a status capacity reservation (default when unknown).
func reservationType(nc *awsv1.EC2NodeClass, id string) awsv1.CapacityReservationType {
	for _, cr := range nc.Status.CapacityReservations {
		if cr.ID == id && cr.ReservationType != "" {
			return cr.ReservationType
		}
	}
	return awsv1.CapacityReservationTypeDefault
}

// classTags are the tags of everything made for the NodeClass: its own tags, then the
// cluster's and the NodeClass's, which the user's may not override.
func (p *Provider) classTags(nc *awsv1.EC2NodeClass) map[string]string {
	tags := maps.Clone(nc.Spec.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[instance.TagEKSClusterName] = p.cluster.Name
	tags[instance.TagClusterPrefix+p.cluster.Name] = instance.TagValueOwned
	tags[instance.TagEC2NodeClass] = nc.Name
	return tags
}

// instanceTags add the NodePool, the NodeClaim and a Name to the class's tags.
func (p *Provider) instanceTags(claim *apisv1.NodeClaim, nc *awsv1.EC2NodeClass, classTags map[string]string) map[string]string {
	tags := maps.Clone(classTags)
	tags[instance.TagNodePool] = claim.Labels[apisv1.NodePoolLabelKey]
	tags[instance.TagNodeClaim] = claim.Name
	if _, ok := nc.Spec.Tags[instance.TagName]; !ok {
		tags[instance.TagName] = claim.Name
	}
	return tags
}

// node is what the claim's nodes register with: the claim's labels (its NodePool's) with the
// capacity type and NodeClass, its taints and startup taints with the unregistered taint, and
// the NodeClass's kubelet settings and user data.
func (p *Provider) node(claim *apisv1.NodeClaim, nc *awsv1.EC2NodeClass, capacityType string) userdata.Node {
	labels := maps.Clone(claim.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[apisv1.CapacityTypeLabelKey] = capacityType
	labels[instance.TagEC2NodeClass] = nc.Name
	taints := []corev1.Taint{apisv1.UnregisteredNoExecuteTaint}
	for _, t := range append(slices.Clone(claim.Spec.Taints), claim.Spec.StartupTaints...) {
		if !slices.ContainsFunc(taints, func(o corev1.Taint) bool { return o.MatchTaint(&t) }) {
			taints = append(taints, t)
		}
	}
	n := userdata.Node{Labels: labels, Taints: taints, Kubelet: nc.Spec.Kubelet}
	if nc.Spec.UserData != nil {
		n.UserData = *nc.Spec.UserData
	}
	return n
}
