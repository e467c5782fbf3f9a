package awsapi

import (
	"slices"
	"strings"
	"time"
)

// launchTemplate is a recorded launch template (one version: the endpoint does not version).
type launchTemplate struct {
	ID      string
	Name    string
	Created time.Time
	Tags    []tag
	Data    templateData
}

// templateData is what a launch template says about the instances it launches.
type templateData struct {
	ImageID        string
	InstanceType   string
	UserData       string
	SecurityGroups []string
	// Profile is the IAM instance profile's name or ARN.
	Profile string
	// InstanceTags are the tags of the instance tag specification.
	InstanceTags []tag
	// ReservationID is the capacity reservation targeted; MarketType is "capacity-block",
	// "spot" or "".
	ReservationID      string
	ReservationPolicy  string
	MarketType         string
	MetadataHTTPTokens string
}

func parseTemplateData(f form) templateData {
	d := templateData{
		ImageID:            f.get("ImageId"),
		InstanceType:       f.get("InstanceType"),
		UserData:           f.get("UserData"),
		SecurityGroups:     f.strs("SecurityGroupId"),
		Profile:            f.get("IamInstanceProfile.Name"),
		ReservationID:      f.get("CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"),
		ReservationPolicy:  f.get("CapacityReservationSpecification.CapacityReservationPreference"),
		MarketType:         f.get("InstanceMarketOptions.MarketType"),
		MetadataHTTPTokens: f.get("MetadataOptions.HttpTokens"),
	}
	if arn := f.get("IamInstanceProfile.Arn"); arn != "" {
		d.Profile = arn
	}
	for _, ts := range f.list("TagSpecification") {
		if ts.get("ResourceType") == "instance" {
			d.InstanceTags = withTags(d.InstanceTags, ts.tags("Tag"))
		}
	}
	// Network interfaces may carry the security groups instead.
	for _, ni := range f.list("NetworkInterface") {
		d.SecurityGroups = append(d.SecurityGroups, ni.strs("SecurityGroupId")...)
	}
	return d
}

type launchTemplateXML struct {
	LaunchTemplateID     string `xml:"launchTemplateId"`
	LaunchTemplateName   string `xml:"launchTemplateName"`
	CreateTime           string `xml:"createTime"`
	CreatedBy            string `xml:"createdBy"`
	DefaultVersionNumber int    `xml:"defaultVersionNumber"`
	LatestVersionNumber  int    `xml:"latestVersionNumber"`
	Tags                 []tag  `xml:"tagSet>item"`
}

func (s *Server) templateXML(lt *launchTemplate) launchTemplateXML {
	return launchTemplateXML{
		LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, CreateTime: isoTime(lt.Created),
		CreatedBy: "arn:aws:iam::" + s.opts.Account + ":role/tenon", DefaultVersionNumber: 1, LatestVersionNumber: 1, Tags: lt.Tags,
	}
}

type createLaunchTemplateResponse struct {
	XMLName struct{} `xml:"CreateLaunchTemplateResponse"`
	ec2Header
	LaunchTemplate launchTemplateXML `xml:"launchTemplate"`
}

func (s *Server) createLaunchTemplate(f form) (ec2Response, *apiError) {
	name := f.get("LaunchTemplateName")
	if name == "" || len(name) < 3 || len(name) > 128 {
		return nil, badRequest("InvalidLaunchTemplateName.MalformedException", "The launch template name %q is not 3 to 128 characters long.", name)
	}
	if s.templateByName(name) != nil {
		return nil, badRequest("InvalidLaunchTemplateName.AlreadyExistsException", "Launch template name already in use.")
	}
	data := f.sub("LaunchTemplateData")
	if len(data) == 0 {
		return nil, badRequest("MissingParameter", "The request must contain the parameter LaunchTemplateData")
	}
	d := parseTemplateData(data)
	if d.ImageID != "" && !s.hasImage(d.ImageID) {
		return nil, badRequest("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", d.ImageID)
	}
	for _, sg := range d.SecurityGroups {
		if _, ok := s.opts.Network.securityGroup(sg); !ok {
			return nil, badRequest("InvalidGroup.NotFound", "The security group '%s' does not exist", sg)
		}
	}
	lt := &launchTemplate{ID: s.nextID("lt"), Name: name, Created: s.opts.Clock.Now(), Data: d}
	for _, ts := range f.list("TagSpecification") {
		if ts.get("ResourceType") == "launch-template" {
			lt.Tags = withTags(lt.Tags, ts.tags("Tag"))
		}
	}
	s.templates[lt.ID] = lt
	return &createLaunchTemplateResponse{LaunchTemplate: s.templateXML(lt)}, nil
}

func (s *Server) templateByName(name string) *launchTemplate {
	for _, lt := range s.templates {
		if lt.Name == name {
			return lt
		}
	}
	return nil
}

func (s *Server) hasImage(id string) bool {
	for _, im := range s.images {
		if im.ID == id {
			return true
		}
	}
	return false
}

type describeLaunchTemplatesResponse struct {
	XMLName struct{} `xml:"DescribeLaunchTemplatesResponse"`
	ec2Header
	LaunchTemplates []launchTemplateXML `xml:"launchTemplates>item"`
	NextToken       string              `xml:"nextToken,omitempty"`
}

func (s *Server) describeLaunchTemplates(f form) (ec2Response, *apiError) {
	ids, names, filters := f.strs("LaunchTemplateId"), f.strs("LaunchTemplateName"), parseFilters(f)
	for _, n := range names {
		if s.templateByName(n) == nil {
			return nil, badRequest("InvalidLaunchTemplateName.NotFoundException", "At least one of the launch templates specified in the request does not exist.")
		}
	}
	for _, id := range ids {
		if s.templates[id] == nil {
			return nil, badRequest("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", id)
		}
	}
	var all []launchTemplateXML
	for _, lt := range sortedTemplates(s.templates) {
		if (len(ids) > 0 && !contains(ids, lt.ID)) || (len(names) > 0 && !contains(names, lt.Name)) {
			continue
		}
		x := s.templateXML(lt)
		ok, err := matchFilters(filters, lt.Tags, func(name string) ([]string, bool) {
			switch name {
			case "launch-template-name":
				return []string{lt.Name}, true
			case "create-time":
				return []string{x.CreateTime}, true
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
	start, end, next, err := page(f, len(all), 1, 200)
	if err != nil {
		return nil, err
	}
	return &describeLaunchTemplatesResponse{LaunchTemplates: all[start:end], NextToken: next}, nil
}

type deleteLaunchTemplateResponse struct {
	XMLName struct{} `xml:"DeleteLaunchTemplateResponse"`
	ec2Header
	LaunchTemplate launchTemplateXML `xml:"launchTemplate"`
}

func (s *Server) deleteLaunchTemplate(f form) (ec2Response, *apiError) {
	lt, err := s.resolveTemplate(f.get("LaunchTemplateId"), f.get("LaunchTemplateName"))
	if err != nil {
		return nil, err
	}
	delete(s.templates, lt.ID)
	return &deleteLaunchTemplateResponse{LaunchTemplate: s.templateXML(lt)}, nil
}

// resolveTemplate finds a launch template by ID or name, with EC2's errors.
func (s *Server) resolveTemplate(id, name string) (*launchTemplate, *apiError) {
	switch {
	case id != "":
		if lt := s.templates[id]; lt != nil {
			return lt, nil
		}
		return nil, badRequest("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", id)
	case name != "":
		if lt := s.templateByName(name); lt != nil {
			return lt, nil
		}
		return nil, badRequest("InvalidLaunchTemplateName.NotFoundException", "The specified launch template, with template name %s, does not exist.", name)
	}
	return nil, badRequest("MissingParameter", "The request must contain the parameter launchTemplateName or launchTemplateId")
}

func sortedTemplates(m map[string]*launchTemplate) []*launchTemplate {
	out := make([]*launchTemplate, 0, len(m))
	for _, lt := range m {
		out = append(out, lt)
	}
	slices.SortFunc(out, func(a, b *launchTemplate) int { return strings.Compare(a.Name, b.Name) })
	return out
}
