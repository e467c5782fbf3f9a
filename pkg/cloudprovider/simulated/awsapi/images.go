package awsapi

import (
	"fmt"
	"slices"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// amazonOwner is the owner alias of the public EKS-optimized AMIs, and amazonOwnerID the
// account the endpoint says owns them.
const (
	amazonOwner   = "amazon"
	amazonOwnerID = "602401143452"
)

// image is an AMI the endpoint serves.
type image struct {
	ID      string
	Name    string
	Arch    string // EC2's: x86_64 or arm64
	Created time.Time
	Tags    []tag
	// Owner is the owning account (default amazonOwnerID, the public EKS-optimized AMIs).
	Owner string
	// Deprecation, when set, is the AMI's deprecation time.
	Deprecation time.Time
}

// publishImages builds the AMIs and SSM parameters of every release of every Kubernetes
// version: AL2023 standard, NVIDIA and Neuron variants and Bottlerocket standard and NVIDIA
// variants, each release named by its own parameter and the last release also by the
// recommended (AL2023) or latest (Bottlerocket) parameter.
func (s *Server) publishImages() {
	s.images, s.params = nil, map[string]string{}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	add := func(name, arch string, created time.Time, params ...string) {
		img := image{ID: resourceID("ami", name), Name: name, Arch: arch, Created: created}
		s.images = append(s.images, img)
		for _, p := range params {
			s.params[p] = img.ID
		}
	}
	for _, k8s := range s.opts.KubernetesVersions {
		for r, rel := range s.opts.AL2023Releases {
			latest := r == len(s.opts.AL2023Releases)-1
			for _, v := range []struct{ arch, variant string }{
				{"x86_64", "standard"}, {"arm64", "standard"}, {"x86_64", "nvidia"}, {"arm64", "nvidia"}, {"x86_64", "neuron"},
			} {
				name := fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", v.arch, v.variant, k8s, rel)
				dir := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/", k8s, v.arch, v.variant)
				params := []string{dir + name + "/image_id"}
				if latest {
					params = append(params, dir+"recommended/image_id")
				}
				add(name, v.arch, base.AddDate(0, 0, r), params...)
			}
		}
		for r, rel := range s.opts.BottlerocketReleases {
			latest := r == len(s.opts.BottlerocketReleases)-1
			for _, v := range []struct{ arch, flavour string }{
				{"x86_64", ""}, {"arm64", ""}, {"x86_64", "-nvidia"}, {"arm64", "-nvidia"},
			} {
				name := fmt.Sprintf("bottlerocket-aws-k8s-%s%s-%s-v%s", k8s, v.flavour, v.arch, rel)
				dir := fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s%s/%s/", k8s, v.flavour, v.arch)
				params := []string{dir + rel + "/image_id"}
				if latest {
					params = append(params, dir+"latest/image_id")
				}
				add(name, v.arch, base.AddDate(0, 0, r), params...)
			}
		}
		s.publishOtherFamilies(k8s, base, add)
	}
	s.images = append(s.images, s.extraImages...)
}

// PublishRelease adds an AL2023 and a Bottlerocket release (either may be empty) and makes
// them the recommended and latest ones, as AWS does when it ships new AMIs: NodeClasses that
// follow an alias's latest version drift to them.
func (s *Server) PublishRelease(al2023, bottlerocket string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if al2023 != "" && !slices.Contains(s.opts.AL2023Releases, al2023) {
		s.opts.AL2023Releases = append(slices.Clone(s.opts.AL2023Releases), al2023)
	}
	if bottlerocket != "" && !slices.Contains(s.opts.BottlerocketReleases, bottlerocket) {
		s.opts.BottlerocketReleases = append(slices.Clone(s.opts.BottlerocketReleases), bottlerocket)
	}
	s.publishImages()
}

type imageXML struct {
	ImageID         string `xml:"imageId"`
	ImageLocation   string `xml:"imageLocation"`
	ImageState      string `xml:"imageState"`
	ImageOwnerID    string `xml:"imageOwnerId"`
	CreationDate    string `xml:"creationDate"`
	IsPublic        bool   `xml:"isPublic"`
	Architecture    string `xml:"architecture"`
	ImageType       string `xml:"imageType"`
	ImageOwnerAlias string `xml:"imageOwnerAlias"`
	Name            string `xml:"name"`
	Description     string `xml:"description"`
	RootDeviceType  string `xml:"rootDeviceType"`
	RootDeviceName  string `xml:"rootDeviceName"`
	Virtualization  string `xml:"virtualizationType"`
	Hypervisor      string `xml:"hypervisor"`
	EnaSupport      bool   `xml:"enaSupport"`
	PlatformDetails string `xml:"platformDetails"`
	UsageOperation  string `xml:"usageOperation"`
	DeprecationTime string `xml:"deprecationTime,omitempty"`
	Platform        string `xml:"platform,omitempty"`
	Tags            []tag  `xml:"tagSet>item"`
}

type describeImagesResponse struct {
	XMLName struct{} `xml:"DescribeImagesResponse"`
	ec2Header
	Images    []imageXML `xml:"imagesSet>item"`
	NextToken string     `xml:"nextToken,omitempty"`
}

func (s *Server) describeImages(f form) (ec2Response, *apiError) {
	ids, owners, filters := f.strs("ImageId"), f.strs("Owner"), parseFilters(f)
	for _, id := range ids {
		if !slices.ContainsFunc(s.images, func(im image) bool { return im.ID == id }) {
			return nil, badRequest("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
		}
	}
	var all []imageXML
	for _, im := range s.images {
		if len(ids) > 0 && !contains(ids, im.ID) {
			continue
		}
		if len(owners) > 0 && !s.ownedBy(im, owners) {
			continue
		}
		deprecated := !im.Deprecation.IsZero() && !s.opts.Clock.Now().Before(im.Deprecation)
		if deprecated && len(ids) == 0 && f.get("IncludeDeprecated") != "true" {
			continue
		}
		x := imageXML{
			ImageID: im.ID, ImageLocation: amazonOwner + "/" + im.Name, ImageState: "available", ImageOwnerID: amazonOwnerID,
			CreationDate: isoTime(im.Created), IsPublic: true, Architecture: im.Arch, ImageType: "machine",
			ImageOwnerAlias: amazonOwner, Name: im.Name, Description: "EKS-optimized Kubernetes node " + im.Name,
			RootDeviceType: "ebs", RootDeviceName: "/dev/xvda", Virtualization: "hvm", Hypervisor: "xen", EnaSupport: true,
			PlatformDetails: linuxProduct, UsageOperation: "RunInstances", Tags: im.Tags,
		}
		s.imageOwnerXML(im, &x)
		ok, err := matchFilters(filters, x.Tags, func(name string) ([]string, bool) {
			switch name {
			case "image-id":
				return []string{x.ImageID}, true
			case "name":
				return []string{x.Name}, true
			case "architecture":
				return []string{x.Architecture}, true
			case "owner-id":
				return []string{x.ImageOwnerID}, true
			case "owner-alias":
				return []string{x.ImageOwnerAlias}, true
			case "state":
				return []string{x.ImageState}, true
			case "image-type":
				return []string{x.ImageType}, true
			case "is-public":
				return []string{boolString(x.IsPublic)}, true
			case "virtualization-type":
				return []string{x.Virtualization}, true
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
	return &describeImagesResponse{Images: all[start:end], NextToken: next}, nil
}

// --- DescribeCapacityReservations ---

type capacityReservationXML struct {
	CapacityReservationID  string `xml:"capacityReservationId"`
	CapacityReservationArn string `xml:"capacityReservationArn"`
	OwnerID                string `xml:"ownerId"`
	InstanceType           string `xml:"instanceType"`
	InstancePlatform       string `xml:"instancePlatform"`
	AvailabilityZone       string `xml:"availabilityZone"`
	AvailabilityZoneID     string `xml:"availabilityZoneId"`
	Tenancy                string `xml:"tenancy"`
	TotalInstanceCount     int    `xml:"totalInstanceCount"`
	AvailableInstanceCount int    `xml:"availableInstanceCount"`
	State                  string `xml:"state"`
	StartDate              string `xml:"startDate,omitempty"`
	EndDate                string `xml:"endDate,omitempty"`
	EndDateType            string `xml:"endDateType"`
	InstanceMatchCriteria  string `xml:"instanceMatchCriteria"`
	ReservationType        string `xml:"reservationType"`
	Tags                   []tag  `xml:"tagSet>item"`
}

type describeCapacityReservationsResponse struct {
	XMLName struct{} `xml:"DescribeCapacityReservationsResponse"`
	ec2Header
	Reservations []capacityReservationXML `xml:"capacityReservationSet>item"`
	NextToken    string                   `xml:"nextToken,omitempty"`
}

func (s *Server) describeCapacityReservations(f form) (ec2Response, *apiError) {
	ids, filters := f.strs("CapacityReservationId"), parseFilters(f)
	now := s.opts.Clock.Now()
	left := s.reservationsLeft(now)
	var all []capacityReservationXML
	for _, r := range s.opts.Catalog.Reservations {
		if len(ids) > 0 && !contains(ids, r.ID) {
			continue
		}
		z, _ := s.opts.Catalog.Zone(r.Zone)
		x := capacityReservationXML{
			CapacityReservationID: r.ID, CapacityReservationArn: "arn:aws:ec2:" + s.region + ":" + s.opts.Account + ":capacity-reservation/" + r.ID,
			OwnerID: s.opts.Account, InstanceType: r.InstanceType, InstancePlatform: linuxProduct, AvailabilityZone: z.Name, AvailabilityZoneID: z.ID,
			Tenancy: "default", TotalInstanceCount: r.Count, AvailableInstanceCount: left[r.ID], State: "active",
			EndDateType: "unlimited", InstanceMatchCriteria: "open", ReservationType: "default",
			Tags: tagList(s.opts.ReservationTags[r.ID]),
		}
		if contains(s.opts.Targeted, r.ID) {
			x.InstanceMatchCriteria = "targeted"
		}
		if !r.Window.Start.IsZero() || !r.Window.End.IsZero() {
			x.ReservationType = "capacity-block"
			x.InstanceMatchCriteria = "targeted"
		}
		if !r.Window.Start.IsZero() {
			x.StartDate = isoTime(r.Window.Start)
			if now.Before(r.Window.Start) {
				x.State = "scheduled"
			}
		}
		if !r.Window.End.IsZero() {
			x.EndDate, x.EndDateType = isoTime(r.Window.End), "limited"
			if !now.Before(r.Window.End) {
				x.State = "expired"
			}
		}
		ok, err := matchFilters(filters, x.Tags, func(name string) ([]string, bool) {
			switch name {
			case "instance-type":
				return []string{x.InstanceType}, true
			case "availability-zone":
				return []string{x.AvailabilityZone}, true
			case "availability-zone-id":
				return []string{x.AvailabilityZoneID}, true
			case "owner-id":
				return []string{x.OwnerID}, true
			case "state":
				return []string{x.State}, true
			case "instance-match-criteria":
				return []string{x.InstanceMatchCriteria}, true
			case "instance-platform":
				return []string{x.InstancePlatform}, true
			case "tenancy":
				return []string{x.Tenancy}, true
			case "end-date-type":
				return []string{x.EndDateType}, true
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
	start, end, next, err := page(f, len(all), 1, 1000)
	if err != nil {
		return nil, err
	}
	return &describeCapacityReservationsResponse{Reservations: all[start:end], NextToken: next}, nil
}

// reservationsLeft is, per reservation, how many more instances it can take now.
func (s *Server) reservationsLeft(now time.Time) map[string]int {
	out := map[string]int{}
	types, err := s.engine.InstanceTypes(engineClass, now)
	if err != nil {
		return out
	}
	for _, it := range types {
		for _, o := range it.Offerings {
			if o.CapacityType == apisv1.CapacityTypeReserved {
				out[o.ReservationID] = o.ReservationCapacity
			}
		}
	}
	return out
}
