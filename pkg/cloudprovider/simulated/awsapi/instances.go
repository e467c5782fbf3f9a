package awsapi

import (
	"strconv"
	"strings"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// instance is what the endpoint records about an engine instance beyond the engine's model.
type instance struct {
	id             string
	tags           []tag
	subnetID       string
	imageID        string
	templateID     string
	securityGroups []string
	profile        string
	privateIP      string
	reservationID  string
	marketType     string
	fleetID        string
}

// ProviderID is the Kubernetes provider ID of an instance: aws:///<zone>/<instance-id>.
func ProviderID(zone, id string) string { return "aws:///" + zone + "/" + id }

// InstanceInfo is an instance as OnInstance and Instances report it.
type InstanceInfo struct {
	ID         string
	ProviderID string
	// Type is the catalog's instance type (shared, read-only); Labels are a Node's labels.
	Type          *catalog.InstanceType
	Labels        map[string]string
	Zone          string
	CapacityType  string
	ReservationID string
	// Price is what the instance costs per hour at the offering it launched at (USD).
	Price      float64
	ImageID    string
	SubnetID   string
	PrivateIP  string
	PrivateDNS string
	Tags       map[string]string
	State      string // EC2's state name
	Launched   time.Time
	// RegisteredAt and DevicesAt are when its Node registers and its device resources
	// appear (zero when the type has none).
	RegisteredAt time.Time
	DevicesAt    time.Time
}

// InstanceEventKind says what an instance's Node must do.
type InstanceEventKind string

// Instance events, in the order an instance lives them.
const (
	// InstanceRunning: the instance booted.
	InstanceRunning InstanceEventKind = "Running"
	// InstanceRegistered: its Node registers now, with CPU, memory, pods and storage.
	InstanceRegistered InstanceEventKind = "Registered"
	// InstanceDevicesReady: its device resources (GPUs, Neuron devices, EFA) appear now.
	InstanceDevicesReady InstanceEventKind = "DevicesReady"
	// InstanceTerminating: it began shutting down; its Node should go.
	InstanceTerminating InstanceEventKind = "Terminating"
	// InstanceTerminated: it is gone.
	InstanceTerminated InstanceEventKind = "Terminated"
)

// InstanceEvent is one change of an instance's life.
type InstanceEvent struct {
	Kind     InstanceEventKind
	At       time.Time
	Instance InstanceInfo
}

// Instances returns every instance the endpoint knows (terminated ones until their retention
// ends), ordered by ID.
func (s *Server) Instances() []InstanceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncLocked()
	var out []InstanceInfo
	for _, ei := range s.engine.Instances() {
		if inst := s.instances[ei.ID]; inst != nil {
			out = append(out, s.info(ei, inst))
		}
	}
	return out
}

// Interrupt injects an interruption of an instance now (see cloud.Cloud.Inject): its notice
// reaches the interruption queue as the matching EventBridge message.
func (s *Server) Interrupt(id string, kind string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncLocked()
	if err := s.engine.Inject(id, interruptionKind(kind), s.opts.Clock.Now()); err != nil {
		return err
	}
	s.syncLocked()
	return nil
}

func (s *Server) info(ei cloud.Instance, inst *instance) InstanceInfo {
	tags := map[string]string{}
	for _, t := range inst.tags {
		tags[t.Key] = t.Value
	}
	return InstanceInfo{
		ID: ei.ID, ProviderID: ProviderID(ei.Offering.Zone, ei.ID), Type: ei.Type, Labels: ei.Labels(),
		Zone: ei.Offering.Zone, CapacityType: ei.Offering.CapacityType, ReservationID: ei.Offering.ReservationID, Price: ei.Offering.Price,
		ImageID: inst.imageID, SubnetID: inst.subnetID, PrivateIP: inst.privateIP, PrivateDNS: s.privateDNS(inst.privateIP),
		Tags: tags, State: stateName(ei.State), Launched: ei.Launched, RegisteredAt: ei.RegisteredAt, DevicesAt: ei.DevicesAt,
	}
}

// privateDNS is the EC2 private DNS name of an address: ip-10-0-0-4.ec2.internal in us-east-1,
// ip-10-0-0-4.<region>.compute.internal elsewhere.
func (s *Server) privateDNS(ip string) string {
	host := "ip-" + strings.ReplaceAll(ip, ".", "-")
	if s.region == "us-east-1" {
		return host + ".ec2.internal"
	}
	return host + "." + s.region + ".compute.internal"
}

// stateName and stateCode are EC2's for an engine state.
func stateName(st cloud.State) string {
	switch st {
	case cloud.Pending:
		return "pending"
	case cloud.Running:
		return "running"
	case cloud.Terminating:
		return "shutting-down"
	}
	return "terminated"
}

func stateCode(name string) int {
	switch name {
	case "pending":
		return 0
	case "running":
		return 16
	case "shutting-down":
		return 32
	case "stopping":
		return 64
	case "stopped":
		return 80
	}
	return 48
}

type instanceStateXML struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type groupXML struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName"`
}

type instanceXML struct {
	InstanceID     string           `xml:"instanceId"`
	ImageID        string           `xml:"imageId"`
	State          instanceStateXML `xml:"instanceState"`
	PrivateDNSName string           `xml:"privateDnsName"`
	DNSName        string           `xml:"dnsName"`
	Reason         string           `xml:"reason"`
	AmiLaunchIndex int              `xml:"amiLaunchIndex"`
	InstanceType   string           `xml:"instanceType"`
	LaunchTime     string           `xml:"launchTime"`
	Placement      struct {
		AvailabilityZone   string `xml:"availabilityZone"`
		AvailabilityZoneID string `xml:"availabilityZoneId"`
		Tenancy            string `xml:"tenancy"`
	} `xml:"placement"`
	Monitoring struct {
		State string `xml:"state"`
	} `xml:"monitoring"`
	SubnetID           string     `xml:"subnetId"`
	VpcID              string     `xml:"vpcId"`
	PrivateIPAddress   string     `xml:"privateIpAddress"`
	Groups             []groupXML `xml:"groupSet>item"`
	Architecture       string     `xml:"architecture"`
	RootDeviceType     string     `xml:"rootDeviceType"`
	RootDeviceName     string     `xml:"rootDeviceName"`
	VirtualizationType string     `xml:"virtualizationType"`
	Hypervisor         string     `xml:"hypervisor"`
	IamInstanceProfile *struct {
		Arn string `xml:"arn"`
		ID  string `xml:"id"`
	} `xml:"iamInstanceProfile,omitempty"`
	InstanceLifecycle     string `xml:"instanceLifecycle,omitempty"`
	SpotInstanceRequestID string `xml:"spotInstanceRequestId,omitempty"`
	CapacityReservationID string `xml:"capacityReservationId,omitempty"`
	StateReason           *struct {
		Code    string `xml:"code"`
		Message string `xml:"message"`
	} `xml:"stateReason,omitempty"`
	Tags            []tag  `xml:"tagSet>item"`
	PlatformDetails string `xml:"platformDetails"`
	EbsOptimized    bool   `xml:"ebsOptimized"`
	EnaSupport      bool   `xml:"enaSupport"`
}

func (s *Server) instanceXML(ei cloud.Instance, inst *instance) instanceXML {
	state := stateName(ei.State)
	x := instanceXML{
		InstanceID: ei.ID, ImageID: inst.imageID, State: instanceStateXML{Code: stateCode(state), Name: state},
		PrivateDNSName: s.privateDNS(inst.privateIP), InstanceType: ei.Type.Name, LaunchTime: isoTime(ei.Launched),
		SubnetID: inst.subnetID, VpcID: s.opts.Network.VPCID, PrivateIPAddress: inst.privateIP,
		Architecture: ec2Arch(ei.Type.Shape.Arch), RootDeviceType: "ebs", RootDeviceName: "/dev/xvda", VirtualizationType: "hvm",
		Hypervisor:            "xen", // EC2 reports xen for every HVM instance, Nitro ones included.
		CapacityReservationID: inst.reservationID, Tags: inst.tags, PlatformDetails: linuxProduct,
		EbsOptimized: true, EnaSupport: true,
	}
	z, _ := s.opts.Catalog.Zone(ei.Offering.Zone)
	x.Placement.AvailabilityZone, x.Placement.AvailabilityZoneID, x.Placement.Tenancy = z.Name, z.ID, "default"
	x.Monitoring.State = "disabled"
	for _, id := range inst.securityGroups {
		sg, _ := s.opts.Network.securityGroup(id)
		x.Groups = append(x.Groups, groupXML{GroupID: id, GroupName: sg.Name})
	}
	if inst.profile != "" {
		arn := inst.profile
		if !strings.HasPrefix(arn, "arn:") {
			arn = "arn:aws:iam::" + s.opts.Account + ":instance-profile/" + inst.profile
		}
		x.IamInstanceProfile = &struct {
			Arn string `xml:"arn"`
			ID  string `xml:"id"`
		}{Arn: arn, ID: "AIPA" + strings.ToUpper(resourceID("p", arn)[3:])}
	}
	switch {
	case ei.Offering.CapacityType == apisv1.CapacityTypeSpot:
		x.InstanceLifecycle, x.SpotInstanceRequestID = "spot", "sir-"+ei.ID[2:10]
	case inst.marketType == "capacity-block":
		x.InstanceLifecycle = "capacity-block"
	}
	if ei.State >= cloud.Terminating {
		code, msg := "Client.UserInitiatedShutdown", "Client.UserInitiatedShutdown: User initiated shutdown"
		switch ei.Reason {
		case cloud.ReasonSpotInterruption:
			code, msg = "Server.SpotInstanceTermination", "Server.SpotInstanceTermination: Spot instance termination"
		case cloud.ReasonScheduledMaintenance, cloud.ReasonCapacityBlockExpired:
			code, msg = "Server.ScheduledStop", "Server.ScheduledStop: Stopped due to scheduled retirement"
		case cloud.ReasonStopped:
			code, msg = "Server.InternalError", "Server.InternalError: Internal error on launch"
		}
		x.StateReason = &struct {
			Code    string `xml:"code"`
			Message string `xml:"message"`
		}{Code: code, Message: msg}
		x.Reason = msg
	}
	return x
}

type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

type describeInstancesResponse struct {
	XMLName struct{} `xml:"DescribeInstancesResponse"`
	ec2Header
	Reservations []reservationXML `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

func (s *Server) describeInstances(f form) (ec2Response, *apiError) {
	ids, filters := f.strs("InstanceId"), parseFilters(f)
	if len(ids) > 0 && f.has("MaxResults") {
		return nil, badRequest("InvalidParameterCombination", "The parameter instancesSet cannot be used with the parameter maxResults")
	}
	var missing []string
	for _, id := range ids {
		if s.instances[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, badRequest("InvalidInstanceID.NotFound", "The instance IDs '%s' do not exist", strings.Join(missing, ", "))
	}
	var all []reservationXML
	for _, ei := range s.engine.Instances() {
		inst := s.instances[ei.ID]
		if inst == nil || (len(ids) > 0 && !contains(ids, ei.ID)) {
			continue
		}
		x := s.instanceXML(ei, inst)
		ok, err := matchFilters(filters, x.Tags, func(name string) ([]string, bool) {
			switch name {
			case "instance-id":
				return []string{x.InstanceID}, true
			case "instance-state-name":
				return []string{x.State.Name}, true
			case "instance-state-code":
				return []string{itoa(x.State.Code)}, true
			case "instance-type":
				return []string{x.InstanceType}, true
			case "availability-zone":
				return []string{x.Placement.AvailabilityZone}, true
			case "subnet-id":
				return []string{x.SubnetID}, true
			case "vpc-id":
				return []string{x.VpcID}, true
			case "image-id":
				return []string{x.ImageID}, true
			case "instance-lifecycle":
				return []string{x.InstanceLifecycle}, true
			case "private-dns-name":
				return []string{x.PrivateDNSName}, true
			case "private-ip-address":
				return []string{x.PrivateIPAddress}, true
			case "capacity-reservation-id":
				return []string{x.CapacityReservationID}, true
			case "architecture":
				return []string{x.Architecture}, true
			case "instance.group-id":
				var out []string
				for _, g := range x.Groups {
					out = append(out, g.GroupID)
				}
				return out, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			all = append(all, reservationXML{ReservationID: "r-" + ei.ID[2:], OwnerID: s.opts.Account, Instances: []instanceXML{x}})
		}
	}
	start, end, next := 0, len(all), ""
	if len(ids) == 0 {
		var err *apiError
		start, end, next, err = page(f, len(all), 5, 1000)
		if err != nil {
			return nil, err
		}
	}
	return &describeInstancesResponse{Reservations: all[start:end], NextToken: next}, nil
}

type instanceStateChangeXML struct {
	InstanceID    string           `xml:"instanceId"`
	CurrentState  instanceStateXML `xml:"currentState"`
	PreviousState instanceStateXML `xml:"previousState"`
}

type terminateInstancesResponse struct {
	XMLName struct{} `xml:"TerminateInstancesResponse"`
	ec2Header
	Instances []instanceStateChangeXML `xml:"instancesSet>item"`
}

func (s *Server) terminateInstances(f form) (ec2Response, *apiError) {
	ids := f.strs("InstanceId")
	if len(ids) == 0 {
		return nil, badRequest("MissingParameter", "The request must contain the parameter InstanceId")
	}
	var missing []string
	for _, id := range ids {
		if s.instances[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, badRequest("InvalidInstanceID.NotFound", "The instance IDs '%s' do not exist", strings.Join(missing, ", "))
	}
	now := s.opts.Clock.Now()
	resp := &terminateInstancesResponse{}
	for _, id := range ids {
		ei, _ := s.engine.Instance(id)
		prev := stateName(ei.State)
		if ei.Alive() {
			if err := s.engine.Terminate(id, now); err != nil {
				return nil, asAPIError(err)
			}
		}
		s.syncLocked()
		ei, _ = s.engine.Instance(id)
		cur := stateName(ei.State)
		resp.Instances = append(resp.Instances, instanceStateChangeXML{
			InstanceID: id, CurrentState: instanceStateXML{Code: stateCode(cur), Name: cur}, PreviousState: instanceStateXML{Code: stateCode(prev), Name: prev},
		})
	}
	return resp, nil
}

type createTagsResponse struct {
	XMLName struct{} `xml:"CreateTagsResponse"`
	ec2Header
	Return bool `xml:"return"`
}

func (s *Server) createTags(f form) (ec2Response, *apiError) {
	ids, tags := f.strs("ResourceId"), f.tags("Tag")
	if len(ids) == 0 || len(tags) == 0 {
		return nil, badRequest("MissingParameter", "The request must contain the parameters ResourceId and Tag")
	}
	for _, t := range tags {
		if strings.HasPrefix(t.Key, "aws:") {
			return nil, badRequest("InvalidParameterValue", "Tag keys starting with 'aws:' are reserved for internal use")
		}
	}
	for _, id := range ids {
		switch {
		case strings.HasPrefix(id, "i-"):
			if s.instances[id] == nil {
				return nil, badRequest("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
			}
		case strings.HasPrefix(id, "lt-"):
			if s.templates[id] == nil {
				return nil, badRequest("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", id)
			}
		default:
			return nil, badRequest("InvalidID", "The ID '%s' is not valid for tagging by this endpoint", id)
		}
	}
	for _, id := range ids {
		if inst := s.instances[id]; inst != nil {
			inst.tags = withTags(inst.tags, tags)
		}
		if lt := s.templates[id]; lt != nil {
			lt.Tags = withTags(lt.Tags, tags)
		}
	}
	return &createTagsResponse{Return: true}, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
