package awsapi

import (
	"cmp"
	"net/http"
	"strconv"
	"strings"
)

// ec2Handler serves one EC2 action with mu held and the engine synced.
type ec2Handler func(s *Server, f form) (ec2Response, *apiError)

var ec2Handlers = map[string]ec2Handler{
	"DescribeInstanceTypes":         (*Server).describeInstanceTypes,
	"DescribeInstanceTypeOfferings": (*Server).describeInstanceTypeOfferings,
	"DescribeAvailabilityZones":     (*Server).describeAvailabilityZones,
	"DescribeSubnets":               (*Server).describeSubnets,
	"DescribeSecurityGroups":        (*Server).describeSecurityGroups,
	"DescribeImages":                (*Server).describeImages,
	"DescribeCapacityReservations":  (*Server).describeCapacityReservations,
	"DescribeSpotPriceHistory":      (*Server).describeSpotPriceHistory,
	"CreateLaunchTemplate":          (*Server).createLaunchTemplate,
	"DescribeLaunchTemplates":       (*Server).describeLaunchTemplates,
	"DeleteLaunchTemplate":          (*Server).deleteLaunchTemplate,
	"CreateFleet":                   (*Server).createFleet,
	"DescribeInstances":             (*Server).describeInstances,
	"TerminateInstances":            (*Server).terminateInstances,
	"CreateTags":                    (*Server).createTags,
}

func (s *Server) serveEC2(w http.ResponseWriter, r *http.Request, f form) {
	action := f.get("Action")
	reqID := s.requestID()
	h, ok := ec2Handlers[action]
	if !ok {
		writeEC2Error(w, reqID, badRequest("InvalidAction", "The action %s is not valid for this web service.", action))
		return
	}
	e, lost := s.fault(r.Context(), svcEC2, action)
	if e != nil {
		writeEC2Error(w, reqID, e)
		return
	}
	if f.get("DryRun") == "true" {
		writeEC2Error(w, reqID, cmp.Or(lost, &apiError{Status: http.StatusPreconditionFailed, Code: "DryRunOperation", Message: "Request would have succeeded, but DryRun flag is set."}))
		return
	}
	s.mu.Lock()
	s.syncLocked()
	resp, err := h(s, f)
	s.mu.Unlock()
	if lost != nil {
		// Served, and whatever it answered is lost.
		writeEC2Error(w, reqID, lost)
		return
	}
	if err != nil {
		writeEC2Error(w, reqID, err)
		return
	}
	resp.setRequestID(reqID)
	writeXML(w, resp)
}

// --- DescribeAvailabilityZones ---

type availabilityZone struct {
	ZoneName           string `xml:"zoneName"`
	ZoneID             string `xml:"zoneId"`
	ZoneState          string `xml:"zoneState"`
	RegionName         string `xml:"regionName"`
	ZoneType           string `xml:"zoneType"`
	OptInStatus        string `xml:"optInStatus"`
	GroupName          string `xml:"groupName"`
	NetworkBorderGroup string `xml:"networkBorderGroup"`
}

type describeAvailabilityZonesResponse struct {
	XMLName struct{} `xml:"DescribeAvailabilityZonesResponse"`
	ec2Header
	Zones []availabilityZone `xml:"availabilityZoneInfo>item"`
}

func (s *Server) describeAvailabilityZones(f form) (ec2Response, *apiError) {
	names, ids, filters := f.strs("ZoneName"), f.strs("ZoneId"), parseFilters(f)
	resp := &describeAvailabilityZonesResponse{}
	for _, z := range s.opts.Catalog.Zones {
		if (len(names) > 0 && !contains(names, z.Name)) || (len(ids) > 0 && !contains(ids, z.ID)) {
			continue
		}
		az := availabilityZone{
			ZoneName: z.Name, ZoneID: z.ID, ZoneState: "available", RegionName: s.region, ZoneType: "availability-zone",
			OptInStatus: "opt-in-not-required", GroupName: s.region, NetworkBorderGroup: s.region,
		}
		ok, err := matchFilters(filters, nil, func(name string) ([]string, bool) {
			switch name {
			case "zone-name":
				return []string{az.ZoneName}, true
			case "zone-id":
				return []string{az.ZoneID}, true
			case "state":
				return []string{az.ZoneState}, true
			case "zone-type":
				return []string{az.ZoneType}, true
			case "region-name":
				return []string{az.RegionName}, true
			case "group-name":
				return []string{az.GroupName}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			resp.Zones = append(resp.Zones, az)
		}
	}
	return resp, nil
}

// --- DescribeSubnets ---

type subnetXML struct {
	SubnetID                string `xml:"subnetId"`
	SubnetArn               string `xml:"subnetArn"`
	State                   string `xml:"state"`
	VpcID                   string `xml:"vpcId"`
	OwnerID                 string `xml:"ownerId"`
	CidrBlock               string `xml:"cidrBlock"`
	AvailableIPAddressCount int    `xml:"availableIpAddressCount"`
	AvailabilityZone        string `xml:"availabilityZone"`
	AvailabilityZoneID      string `xml:"availabilityZoneId"`
	DefaultForAz            bool   `xml:"defaultForAz"`
	MapPublicIPOnLaunch     bool   `xml:"mapPublicIpOnLaunch"`
	Tags                    []tag  `xml:"tagSet>item"`
}

type describeSubnetsResponse struct {
	XMLName struct{} `xml:"DescribeSubnetsResponse"`
	ec2Header
	Subnets   []subnetXML `xml:"subnetSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

func (s *Server) describeSubnets(f form) (ec2Response, *apiError) {
	ids, filters := f.strs("SubnetId"), parseFilters(f)
	for _, id := range ids {
		if _, ok := s.opts.Network.subnet(id); !ok {
			return nil, badRequest("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
		}
	}
	used := map[string]int{}
	for _, inst := range s.instances {
		if ei, ok := s.engine.Instance(inst.id); ok && ei.Alive() {
			used[inst.subnetID]++
		}
	}
	var all []subnetXML
	for _, sn := range s.opts.Network.Subnets {
		if len(ids) > 0 && !contains(ids, sn.ID) {
			continue
		}
		z, _ := s.opts.Catalog.Zone(sn.Zone)
		x := subnetXML{
			SubnetID: sn.ID, SubnetArn: "arn:aws:ec2:" + s.region + ":" + s.opts.Account + ":subnet/" + sn.ID, State: "available",
			VpcID: s.opts.Network.VPCID, OwnerID: s.opts.Account, CidrBlock: sn.CIDR,
			AvailableIPAddressCount: max(0, subnetSize(sn.CIDR)-used[sn.ID]),
			AvailabilityZone:        z.Name, AvailabilityZoneID: z.ID, Tags: tagList(sn.Tags),
		}
		ok, err := matchFilters(filters, x.Tags, func(name string) ([]string, bool) {
			switch name {
			case "subnet-id":
				return []string{x.SubnetID}, true
			case "vpc-id":
				return []string{x.VpcID}, true
			case "availability-zone":
				return []string{x.AvailabilityZone}, true
			case "availability-zone-id":
				return []string{x.AvailabilityZoneID}, true
			case "cidr-block", "cidr":
				return []string{x.CidrBlock}, true
			case "state":
				return []string{x.State}, true
			case "owner-id":
				return []string{x.OwnerID}, true
			case "subnet-arn":
				return []string{x.SubnetArn}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			all = append(all, x)
		}
	}
	start, end, next, err := page(f, len(all), 5, 1000)
	if err != nil {
		return nil, err
	}
	return &describeSubnetsResponse{Subnets: all[start:end], NextToken: next}, nil
}

// --- DescribeSecurityGroups ---

type securityGroupXML struct {
	GroupID          string `xml:"groupId"`
	GroupName        string `xml:"groupName"`
	GroupDescription string `xml:"groupDescription"`
	VpcID            string `xml:"vpcId"`
	OwnerID          string `xml:"ownerId"`
	SecurityGroupArn string `xml:"securityGroupArn"`
	Tags             []tag  `xml:"tagSet>item"`
}

type describeSecurityGroupsResponse struct {
	XMLName struct{} `xml:"DescribeSecurityGroupsResponse"`
	ec2Header
	Groups    []securityGroupXML `xml:"securityGroupInfo>item"`
	NextToken string             `xml:"nextToken,omitempty"`
}

func (s *Server) describeSecurityGroups(f form) (ec2Response, *apiError) {
	ids, names, filters := f.strs("GroupId"), f.strs("GroupName"), parseFilters(f)
	for _, id := range ids {
		if _, ok := s.opts.Network.securityGroup(id); !ok {
			return nil, badRequest("InvalidGroup.NotFound", "The security group '%s' does not exist", id)
		}
	}
	var all []securityGroupXML
	for _, sg := range s.opts.Network.SecurityGroups {
		if (len(ids) > 0 && !contains(ids, sg.ID)) || (len(names) > 0 && !contains(names, sg.Name)) {
			continue
		}
		x := securityGroupXML{
			GroupID: sg.ID, GroupName: sg.Name, GroupDescription: sg.Description, VpcID: s.opts.Network.VPCID,
			OwnerID: s.opts.Account, SecurityGroupArn: "arn:aws:ec2:" + s.region + ":" + s.opts.Account + ":security-group/" + sg.ID,
			Tags: tagList(sg.Tags),
		}
		ok, err := matchFilters(filters, x.Tags, func(name string) ([]string, bool) {
			switch name {
			case "group-id":
				return []string{x.GroupID}, true
			case "group-name":
				return []string{x.GroupName}, true
			case "vpc-id":
				return []string{x.VpcID}, true
			case "owner-id":
				return []string{x.OwnerID}, true
			case "description":
				return []string{x.GroupDescription}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			all = append(all, x)
		}
	}
	start, end, next, err := page(f, len(all), 5, 1000)
	if err != nil {
		return nil, err
	}
	return &describeSecurityGroupsResponse{Groups: all[start:end], NextToken: next}, nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func boolString(b bool) string { return strconv.FormatBool(b) }

// ec2Arch maps a catalog architecture to EC2's.
func ec2Arch(arch string) string {
	if arch == "amd64" {
		return "x86_64"
	}
	return arch
}

// titleManufacturer spells a manufacturer as EC2 does ("intel" → "Intel", "aws" → "AWS").
func titleManufacturer(m string) string {
	switch strings.ToLower(m) {
	case "aws", "amd", "nvidia":
		return strings.ToUpper(m)
	case "":
		return ""
	}
	return strings.ToUpper(m[:1]) + m[1:]
}
