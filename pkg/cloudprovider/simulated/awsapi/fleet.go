package awsapi

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// override is one launch-template config × override pair of a CreateFleet request.
type override struct {
	template *launchTemplate
	version  string
	// index orders overrides as the request lists them.
	index        int
	instanceType string
	subnetID     string
	zone         string
	imageID      string
	priority     float64
}

type fleetOverridesXML struct {
	InstanceType     string `xml:"instanceType"`
	SubnetID         string `xml:"subnetId,omitempty"`
	AvailabilityZone string `xml:"availabilityZone"`
	ImageID          string `xml:"imageId,omitempty"`
	Priority         string `xml:"priority,omitempty"`
}

type launchTemplateAndOverridesXML struct {
	Spec struct {
		LaunchTemplateID   string `xml:"launchTemplateId"`
		LaunchTemplateName string `xml:"launchTemplateName"`
		Version            string `xml:"version"`
	} `xml:"launchTemplateSpecification"`
	Overrides fleetOverridesXML `xml:"overrides"`
}

type fleetInstanceXML struct {
	LaunchTemplateAndOverrides launchTemplateAndOverridesXML `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string                        `xml:"lifecycle"`
	InstanceIDs                []string                      `xml:"instanceIds>item"`
	InstanceType               string                        `xml:"instanceType"`
	Platform                   string                        `xml:"platform,omitempty"`
}

type fleetErrorXML struct {
	LaunchTemplateAndOverrides launchTemplateAndOverridesXML `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string                        `xml:"lifecycle"`
	ErrorCode                  string                        `xml:"errorCode"`
	ErrorMessage               string                        `xml:"errorMessage"`
}

type createFleetResponse struct {
	XMLName struct{} `xml:"CreateFleetResponse"`
	ec2Header
	FleetID   string             `xml:"fleetId"`
	Errors    []fleetErrorXML    `xml:"errorSet>item"`
	Instances []fleetInstanceXML `xml:"fleetInstanceSet>item"`
}

func (o *override) xml() launchTemplateAndOverridesXML {
	var x launchTemplateAndOverridesXML
	x.Spec.LaunchTemplateID, x.Spec.LaunchTemplateName, x.Spec.Version = o.template.ID, o.template.Name, o.version
	x.Overrides = fleetOverridesXML{InstanceType: o.instanceType, SubnetID: o.subnetID, AvailabilityZone: o.zone, ImageID: o.imageID}
	if !math.IsInf(o.priority, 1) {
		x.Overrides.Priority = strconv.FormatFloat(o.priority, 'f', -1, 64)
	}
	return x
}

// createFleet launches an instant fleet: for each capacity type with target capacity, the
// overrides are tried in the allocation strategy's order (lowest price first; by priority for
// "prioritized"; the price-capacity and capacity strategies also try the cheapest offering
// with room first), each failure recorded in the error set as EC2 does, until the target is
// met or every override has failed.
func (s *Server) createFleet(f form) (ec2Response, *apiError) {
	if token := f.get("ClientToken"); token != "" {
		if prev, ok := s.fleets[token]; ok {
			return prev, nil
		}
	}
	if t := f.get("Type"); t != "instant" {
		return nil, badRequest("InvalidParameterValue", "The fleet type %q is not supported by this endpoint; use instant.", t)
	}
	overrides, err := s.fleetOverrides(f)
	if err != nil {
		return nil, err
	}
	target := f.sub("TargetCapacitySpecification")
	total, err := target.intField("TotalTargetCapacity", 0)
	if err != nil {
		return nil, err
	}
	onDemand, err := target.intField("OnDemandTargetCapacity", 0)
	if err != nil {
		return nil, err
	}
	spot, err := target.intField("SpotTargetCapacity", 0)
	if err != nil {
		return nil, err
	}
	def := target.get("DefaultTargetCapacityType")
	if total < 1 || onDemand < 0 || spot < 0 || onDemand+spot > total {
		return nil, badRequest("InvalidTargetCapacitySpecification", "TotalTargetCapacity %d must be at least 1 and cover OnDemandTargetCapacity %d and SpotTargetCapacity %d", total, onDemand, spot)
	}
	switch def {
	case "on-demand":
		onDemand += total - onDemand - spot
	case "spot":
		spot += total - onDemand - spot
	case "capacity-block", "reserved-capacity":
		onDemand += total - onDemand - spot
	default:
		return nil, badRequest("InvalidParameterValue", "DefaultTargetCapacityType %q is not one of on-demand, spot, capacity-block", def)
	}
	var requestTags []tag
	for _, ts := range f.list("TagSpecification") {
		if ts.get("ResourceType") == "instance" {
			requestTags = withTags(requestTags, ts.tags("Tag"))
		}
	}
	resp := &createFleetResponse{FleetID: "fleet-" + s.nextID("x")[2:]}
	strategies := map[string]string{
		apisv1.CapacityTypeOnDemand: f.get("OnDemandOptions.AllocationStrategy"),
		apisv1.CapacityTypeSpot:     f.get("SpotOptions.AllocationStrategy"),
	}
	for _, want := range []struct {
		capacityType string
		n            int
	}{{apisv1.CapacityTypeOnDemand, onDemand}, {apisv1.CapacityTypeSpot, spot}} {
		if want.n == 0 {
			continue
		}
		order := s.orderOverrides(overrides, want.capacityType, strategies[want.capacityType])
		failed := map[int]bool{}
		for launched := 0; launched < want.n; {
			ok := false
			for _, o := range order {
				if failed[o.index] {
					continue
				}
				id, ferr := s.launchOverride(o, want.capacityType, requestTags, resp.FleetID)
				if ferr != nil {
					failed[o.index] = true
					resp.Errors = append(resp.Errors, fleetErrorXML{LaunchTemplateAndOverrides: o.xml(), Lifecycle: lifecycle(want.capacityType), ErrorCode: ferr.Code, ErrorMessage: ferr.Message})
					continue
				}
				resp.addInstance(o, want.capacityType, id)
				launched, ok = launched+1, true
				break
			}
			if !ok {
				break
			}
		}
	}
	if token := f.get("ClientToken"); token != "" {
		s.fleets[token] = resp
	}
	return resp, nil
}

func (r *createFleetResponse) addInstance(o *override, capacityType, id string) {
	for i := range r.Instances {
		fi := &r.Instances[i]
		if fi.LaunchTemplateAndOverrides == o.xml() && fi.Lifecycle == lifecycle(capacityType) {
			fi.InstanceIDs = append(fi.InstanceIDs, id)
			return
		}
	}
	r.Instances = append(r.Instances, fleetInstanceXML{LaunchTemplateAndOverrides: o.xml(), Lifecycle: lifecycle(capacityType), InstanceIDs: []string{id}, InstanceType: o.instanceType})
}

// lifecycle is the fleet's name for a capacity type.
func lifecycle(capacityType string) string {
	if capacityType == apisv1.CapacityTypeSpot {
		return "spot"
	}
	return "on-demand"
}

// fleetOverrides reads the request's launch-template configs into overrides.
func (s *Server) fleetOverrides(f form) ([]*override, *apiError) {
	configs := f.list("LaunchTemplateConfigs")
	if len(configs) == 0 {
		return nil, badRequest("MissingParameter", "The request must contain the parameter LaunchTemplateConfigs")
	}
	var out []*override
	for _, cfg := range configs {
		spec := cfg.sub("LaunchTemplateSpecification")
		lt, err := s.resolveTemplate(spec.get("LaunchTemplateId"), spec.get("LaunchTemplateName"))
		if err != nil {
			return nil, err
		}
		version := spec.get("Version")
		if version == "" {
			version = "$Default"
		}
		ovs := cfg.list("Overrides")
		if len(ovs) == 0 {
			ovs = []form{{}}
		}
		for _, ov := range ovs {
			o := &override{template: lt, version: version, index: len(out), instanceType: ov.get("InstanceType"), subnetID: ov.get("SubnetId"), zone: ov.get("AvailabilityZone"), imageID: ov.get("ImageId"), priority: math.Inf(1)}
			if o.instanceType == "" {
				o.instanceType = lt.Data.InstanceType
			}
			if o.imageID == "" {
				o.imageID = lt.Data.ImageID
			}
			if p := ov.get("Priority"); p != "" {
				v, perr := strconv.ParseFloat(p, 64)
				if perr != nil {
					return nil, badRequest("InvalidParameterValue", "Priority %q is not a number", p)
				}
				o.priority = v
			}
			if o.subnetID != "" {
				sn, ok := s.opts.Network.subnet(o.subnetID)
				if !ok {
					return nil, badRequest("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", o.subnetID)
				}
				o.zone = sn.Zone
			} else if o.zone != "" {
				for _, sn := range s.opts.Network.Subnets {
					if sn.Zone == o.zone {
						o.subnetID = sn.ID
						break
					}
				}
			}
			if o.instanceType == "" || o.subnetID == "" {
				return nil, badRequest("InvalidParameterValue", "override %d of launch template %s names no instance type or no subnet", len(out)+1, lt.Name)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// orderOverrides returns the overrides in the order a strategy tries them.
func (s *Server) orderOverrides(overrides []*override, capacityType, strategy string) []*override {
	out := slices.Clone(overrides)
	price := func(o *override) float64 {
		it, ok := s.opts.Catalog.Get(o.instanceType)
		if !ok {
			return math.Inf(1)
		}
		for _, off := range it.Offerings {
			if off.Zone == o.zone && off.CapacityType == capacityType {
				return off.Price
			}
		}
		if p, ok := it.OnDemandPrice(); ok {
			return p
		}
		return math.Inf(1)
	}
	slices.SortStableFunc(out, func(a, b *override) int {
		if strategy == "prioritized" || strategy == "capacity-optimized-prioritized" {
			if c := cmp.Compare(a.priority, b.priority); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(price(a), price(b)), cmp.Compare(a.index, b.index))
	})
	return out
}

// launchOverride launches one instance through an override, or says why EC2 would not.
func (s *Server) launchOverride(o *override, capacityType string, requestTags []tag, fleetID string) (string, *apiError) {
	it, ok := s.opts.Catalog.Get(o.instanceType)
	if !ok {
		return "", &apiError{Code: "InvalidParameterValue", Message: fmt.Sprintf("The instance type '%s' does not exist", o.instanceType)}
	}
	if o.imageID != "" && !s.hasImage(o.imageID) {
		return "", &apiError{Code: "InvalidAMIID.NotFound", Message: fmt.Sprintf("The image id '[%s]' does not exist", o.imageID)}
	}
	if img := s.image(o.imageID); img != nil && img.Arch != ec2Arch(it.Shape.Arch) {
		return "", &apiError{Code: "InvalidParameterValue", Message: fmt.Sprintf("The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI.", ec2Arch(it.Shape.Arch), img.Arch)}
	}
	sn, _ := s.opts.Network.subnet(o.subnetID)
	if s.subnetFree(sn) <= 0 {
		return "", &apiError{Code: "InsufficientFreeAddressesInSubnet", Message: fmt.Sprintf("There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.", sn.ID)}
	}
	d := o.template.Data
	reqs := []scheduling.Requirement{
		scheduling.In(apisv1.LabelInstanceType, o.instanceType),
		scheduling.In(apisv1.LabelZone, o.zone),
	}
	ct := capacityType
	if d.ReservationID != "" || d.MarketType == "capacity-block" {
		ct = apisv1.CapacityTypeReserved
		if d.ReservationID == "" {
			return "", &apiError{Code: "InvalidParameterValue", Message: "a capacity-block launch must target a capacity reservation"}
		}
		reqs = append(reqs, scheduling.In(apisv1.LabelCapacityReservationID, d.ReservationID))
	}
	reqs = append(reqs, scheduling.In(apisv1.CapacityTypeLabelKey, ct))
	now := s.opts.Clock.Now()
	ei, err := s.engine.Launch(cloud.LaunchRequest{
		Class:        engineClass,
		Requirements: scheduling.NewRequirements(reqs...),
		Avoid: func(off cloudprovider.Offering) bool {
			return s.ice[off]
		},
	}, now)
	var ice *cloudprovider.InsufficientCapacityError
	switch {
	case errors.As(err, &ice) && ct == apisv1.CapacityTypeReserved:
		return "", &apiError{Code: "ReservationCapacityExceeded", Message: fmt.Sprintf("The requested capacity reservation %s has no available capacity.", d.ReservationID)}
	case errors.As(err, &ice):
		return "", &apiError{Code: "InsufficientInstanceCapacity", Message: fmt.Sprintf("We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity. You can currently get %s capacity by not specifying an Availability Zone in your request or choosing a different Availability Zone.", o.instanceType, o.zone, o.instanceType)}
	case errors.Is(err, cloud.ErrNoCompatibleOffering) && ct == apisv1.CapacityTypeReserved:
		return "", &apiError{Code: "InvalidCapacityReservationId.NotFound", Message: fmt.Sprintf("The capacity reservation '%s' does not exist or does not match %s in %s.", d.ReservationID, o.instanceType, o.zone)}
	case errors.Is(err, cloud.ErrNoCompatibleOffering):
		return "", &apiError{Code: "Unsupported", Message: fmt.Sprintf("Your requested instance type (%s) is not supported in your requested Availability Zone (%s) as %s.", o.instanceType, o.zone, capacityType)}
	case err != nil:
		return "", &apiError{Code: "InternalError", Message: err.Error()}
	}
	tags := withTags(d.InstanceTags, requestTags)
	tags = withTags(tags, []tag{
		{Key: "aws:ec2launchtemplate:id", Value: o.template.ID},
		{Key: "aws:ec2launchtemplate:version", Value: "1"},
		{Key: "aws:ec2:fleet-id", Value: fleetID},
	})
	s.ipSeq++
	inst := &instance{
		id: ei.ID, tags: tags, subnetID: sn.ID, imageID: o.imageID, templateID: o.template.ID,
		securityGroups: slices.Clone(d.SecurityGroups), profile: d.Profile, privateIP: privateIP(sn.CIDR, s.ipSeq),
		reservationID: ei.Offering.ReservationID, marketType: d.MarketType, fleetID: fleetID,
	}
	s.instances[inst.id] = inst
	return inst.id, nil
}

func (s *Server) image(id string) *image {
	for i := range s.images {
		if s.images[i].ID == id {
			return &s.images[i]
		}
	}
	return nil
}

// subnetFree is how many addresses a subnet has left.
func (s *Server) subnetFree(sn Subnet) int {
	used := 0
	for _, inst := range s.instances {
		if inst.subnetID != sn.ID {
			continue
		}
		if ei, ok := s.engine.Instance(inst.id); ok && ei.Alive() {
			used++
		}
	}
	return subnetSize(sn.CIDR) - used
}
