package awsapi

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Image is an AMI added with AddImage beside the EKS-optimized ones the endpoint publishes:
// a user's own image (a golden AMI), found by ID, name, owner or tags.
type Image struct {
	// ID is the AMI ID (ami- and hex digits); empty derives one from Name.
	ID string
	// Name is the AMI name. Required.
	Name string
	// Arch is EC2's architecture: x86_64 (default) or arm64.
	Arch string
	// Created is the creation date (default the server clock's now).
	Created time.Time
	// Deprecation, when set, is when the AMI is deprecated.
	Deprecation time.Time
	// Owner is the owning account: default the endpoint's own account ("self").
	Owner string
	// Tags are the AMI's tags.
	Tags map[string]string
}

var imageIDPattern = regexp.MustCompile(`^ami-[0-9a-f]{8,17}$`)

// AddImage adds an AMI that DescribeImages serves from now on. Adding an ID again replaces
// that image.
func (s *Server) AddImage(img Image) error {
	if img.Name == "" {
		return errors.New("awsapi: AddImage: the image needs a name")
	}
	if img.ID == "" {
		img.ID = resourceID("ami", "user/"+img.Name)
	}
	if !imageIDPattern.MatchString(img.ID) {
		return fmt.Errorf("awsapi: AddImage: image ID %q is not ami- and 8 to 17 hex digits", img.ID)
	}
	if img.Arch == "" {
		img.Arch = "x86_64"
	}
	if img.Arch != "x86_64" && img.Arch != "arm64" {
		return fmt.Errorf("awsapi: AddImage: architecture %q is not x86_64 or arm64", img.Arch)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if img.Created.IsZero() {
		img.Created = s.opts.Clock.Now()
	}
	if img.Owner == "" {
		img.Owner = s.opts.Account
	}
	im := image{ID: img.ID, Name: img.Name, Arch: img.Arch, Created: img.Created, Tags: tagList(img.Tags), Owner: img.Owner, Deprecation: img.Deprecation}
	s.extraImages = slices.DeleteFunc(s.extraImages, func(x image) bool { return x.ID == im.ID })
	s.extraImages = append(s.extraImages, im)
	s.publishImages()
	return nil
}

// ownedBy reports whether an image belongs to one of DescribeImages' owners: account IDs,
// "self" (the endpoint's account) or "amazon".
func (s *Server) ownedBy(im image, owners []string) bool {
	owner := im.Owner
	if owner == "" {
		owner = amazonOwnerID
	}
	for _, o := range owners {
		switch {
		case o == owner:
			return true
		case o == "self" && owner == s.opts.Account:
			return true
		case o == amazonOwner && owner == amazonOwnerID:
			return true
		}
	}
	return false
}

// imageOwnerXML fills in what depends on the image's owner, platform and deprecation.
func (s *Server) imageOwnerXML(im image, x *imageXML) {
	if im.Owner != "" && im.Owner != amazonOwnerID {
		x.ImageOwnerID, x.ImageOwnerAlias, x.IsPublic = im.Owner, "", false
		x.ImageLocation = im.Owner + "/" + im.Name
		x.Description = im.Name
	}
	if strings.HasPrefix(im.Name, "Windows_Server") {
		x.Platform, x.PlatformDetails, x.UsageOperation = "windows", "Windows", "RunInstances:0002"
		x.RootDeviceName = "/dev/sda1"
	}
	if !im.Deprecation.IsZero() {
		x.DeprecationTime = isoTime(im.Deprecation)
	}
}

// windowsBuilds are the Windows Server versions the endpoint publishes EKS-optimized AMIs
// of, and the first Kubernetes minor version each is published for.
var windowsBuilds = []struct {
	version  string
	minMinor int
}{{"2019", 0}, {"2022", 0}, {"2025", 35}}

// publishOtherFamilies adds, for one Kubernetes version, the AL2 AMIs (standard, arm64 and
// GPU, only for versions before 1.33, as AWS stopped publishing them there) of every AL2023
// release name, and the latest Windows Server Core AMIs, each under the SSM parameters AWS
// publishes them at.
func (s *Server) publishOtherFamilies(k8s string, base time.Time, add func(name, arch string, created time.Time, params ...string)) {
	minor := -1
	if _, m, ok := strings.Cut(k8s, "."); ok {
		if n, err := strconv.Atoi(m); err == nil {
			minor = n
		}
	}
	if minor >= 0 && minor < 33 {
		for r, rel := range s.opts.AL2023Releases {
			latest := r == len(s.opts.AL2023Releases)-1
			for _, v := range []struct{ dir, prefix, arch string }{
				{"amazon-linux-2", "amazon-eks-node", "x86_64"},
				{"amazon-linux-2-arm64", "amazon-eks-arm64-node", "arm64"},
				{"amazon-linux-2-gpu", "amazon-eks-gpu-node", "x86_64"},
			} {
				name := fmt.Sprintf("%s-%s-%s", v.prefix, k8s, rel)
				dir := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/%s/", k8s, v.dir)
				params := []string{dir + name + "/image_id"}
				if latest {
					params = append(params, dir+"recommended/image_id")
				}
				add(name, v.arch, base.AddDate(0, 0, r), params...)
			}
		}
	}
	if len(s.opts.AL2023Releases) == 0 {
		return
	}
	last := len(s.opts.AL2023Releases) - 1
	rel := strings.TrimPrefix(s.opts.AL2023Releases[last], "v")
	for _, w := range windowsBuilds {
		if minor < w.minMinor {
			continue
		}
		family := fmt.Sprintf("Windows_Server-%s-English-Core-EKS_Optimized-%s", w.version, k8s)
		add(family+"-"+rel, "x86_64", base.AddDate(0, 0, last), "/aws/service/ami-windows-latest/"+family+"/image_id")
	}
}

// InstanceProfiles returns the names of the instance profiles that exist, sorted.
func (s *Server) InstanceProfiles() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.profiles))
	for name := range s.profiles {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
