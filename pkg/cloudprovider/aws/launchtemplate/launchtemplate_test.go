package launchtemplate

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/internal/awstest"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

var ctx = context.Background()

func nodeClass(name string) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}, Role: "nodes"},
	}
}

func spec(e *awstest.Env, t *testing.T, nc *awsv1.EC2NodeClass) Spec {
	var sgs []string
	for _, sg := range e.SecurityGroups(t) {
		sgs = append(sgs, sg.ID)
	}
	return Spec{
		NodeClass: nc, NodeClassHash: nc.Hash("ca"), ImageID: e.Image(t, "amazon-eks-node-al2023-x86_64-standard-1.37-*"),
		UserData: "#!/bin/bash\necho hi\n", SecurityGroups: sgs, InstanceProfile: "tenon-nodes", CapacityType: apisv1.CapacityTypeOnDemand,
		Tags: map[string]string{instance.TagEKSClusterName: "tenon", instance.TagClusterPrefix + "tenon": "owned", instance.TagEC2NodeClass: nc.Name},
	}
}

func newProvider(t *testing.T, e *awstest.Env) *Provider {
	p, err := New(Options{EC2: e.EC2, ClusterName: "tenon"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHundredClaimsOfOneShapeMakeOneTemplate(t *testing.T) {
	e := awstest.New(t, awsapi.Options{})
	p := newProvider(t, e)
	s := spec(e, t, nodeClass("default"))
	creates, describes := e.Calls("CreateLaunchTemplate"), e.Calls("DescribeLaunchTemplates")
	var wg sync.WaitGroup
	names := make([]string, 100)
	errs := make([]error, 100)
	for i := range 100 {
		wg.Go(func() { names[i], errs[i] = p.Ensure(ctx, s) })
	}
	wg.Wait()
	for i := range 100 {
		if errs[i] != nil || names[i] != names[0] {
			t.Fatalf("Ensure %d = %q, %v; want %q", i, names[i], errs[i], names[0])
		}
	}
	if c, d := creates(), describes(); c != 1 || d != 1 {
		t.Fatalf("100 Ensures made %d creates and %d describes, want 1 and 1", c, d)
	}
	out, err := e.EC2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	if err != nil || len(out.LaunchTemplates) != 1 || aws.ToString(out.LaunchTemplates[0].LaunchTemplateName) != names[0] {
		t.Fatalf("templates %+v, %v", out, err)
	}
	// A restarted controller finds the template instead of making another.
	if name, err := newProvider(t, e).Ensure(ctx, s); err != nil || name != names[0] || creates() != 1 {
		t.Fatalf("after a restart: %q, %v, %d creates", name, err, creates())
	}
}

func TestEveryPartOfTheSpecNamesItsOwnTemplate(t *testing.T) {
	e := awstest.New(t, awsapi.Options{})
	p := newProvider(t, e)
	base := spec(e, t, nodeClass("default"))
	other := nodeClass("default")
	other.Spec.Tags = map[string]string{"team": "ml"}
	variants := map[string]func(*Spec){
		"image":       func(s *Spec) { s.ImageID = e.Image(t, "amazon-eks-node-al2023-arm64-standard-1.37-*") },
		"user data":   func(s *Spec) { s.UserData = "#!/bin/bash\necho other\n" },
		"hash":        func(s *Spec) { s.NodeClassHash = other.Hash("ca") },
		"groups":      func(s *Spec) { s.SecurityGroups = s.SecurityGroups[:1] },
		"profile":     func(s *Spec) { s.InstanceProfile = "other" },
		"spot":        func(s *Spec) { s.CapacityType = apisv1.CapacityTypeSpot },
		"reservation": func(s *Spec) { s.CapacityType, s.ReservationID = apisv1.CapacityTypeReserved, "cr-1" },
		"node class":  func(s *Spec) { s.NodeClass = nodeClass("other") },
	}
	seen := map[string]string{p.Name(base): "base"}
	for what, change := range variants {
		s := base
		change(&s)
		name := p.Name(s)
		if prev, ok := seen[name]; ok {
			t.Errorf("changing %s gives the name of %s: %s", what, prev, name)
		}
		seen[name] = what
	}
	groups := base
	groups.SecurityGroups = []string{base.SecurityGroups[1], base.SecurityGroups[0]}
	if p.Name(groups) != p.Name(base) {
		t.Error("the order of the security groups changed the name")
	}
}

func TestInput(t *testing.T) {
	nc := nodeClass("default")
	base := Spec{NodeClass: nc, ImageID: "ami-1", UserData: "ud", SecurityGroups: []string{"sg-1"}, InstanceProfile: "p", CapacityType: apisv1.CapacityTypeOnDemand, Tags: map[string]string{"a": "1"}}
	t.Run("on-demand", func(t *testing.T) {
		in, err := Input("n", base)
		if err != nil {
			t.Fatal(err)
		}
		d := in.LaunchTemplateData
		if aws.ToString(d.ImageId) != "ami-1" || aws.ToString(d.UserData) != "dWQ=" || aws.ToString(d.IamInstanceProfile.Name) != "p" || len(d.SecurityGroupIds) != 1 {
			t.Fatalf("data %+v", d)
		}
		if d.CapacityReservationSpecification.CapacityReservationPreference != ec2types.CapacityReservationPreferenceNone {
			t.Errorf("an on-demand template should stay out of open reservations")
		}
		if d.MetadataOptions.HttpTokens != ec2types.LaunchTemplateHttpTokensStateRequired || aws.ToInt32(d.MetadataOptions.HttpPutResponseHopLimit) != 1 {
			t.Errorf("metadata defaults %+v", d.MetadataOptions)
		}
		if len(d.BlockDeviceMappings) != 1 || aws.ToInt32(d.BlockDeviceMappings[0].Ebs.VolumeSize) != 20 {
			t.Errorf("default AL2023 volumes %+v", d.BlockDeviceMappings)
		}
		if len(d.TagSpecifications) != 1 || d.TagSpecifications[0].ResourceType != ec2types.ResourceTypeNetworkInterface {
			t.Errorf("tag specs %+v", d.TagSpecifications)
		}
		if len(in.TagSpecifications) != 1 || in.TagSpecifications[0].ResourceType != ec2types.ResourceTypeLaunchTemplate {
			t.Errorf("template tags %+v", in.TagSpecifications)
		}
	})
	t.Run("capacity block", func(t *testing.T) {
		s := base
		s.CapacityType, s.ReservationID, s.ReservationType = apisv1.CapacityTypeReserved, "cr-9", awsv1.CapacityReservationTypeCapacityBlock
		in, _ := Input("n", s)
		crs := in.LaunchTemplateData.CapacityReservationSpecification
		if crs.CapacityReservationPreference != ec2types.CapacityReservationPreferenceCapacityReservationsOnly || aws.ToString(crs.CapacityReservationTarget.CapacityReservationId) != "cr-9" {
			t.Errorf("reservation %+v", crs)
		}
		if in.LaunchTemplateData.InstanceMarketOptions == nil || in.LaunchTemplateData.InstanceMarketOptions.MarketType != ec2types.MarketTypeCapacityBlock {
			t.Errorf("a capacity block needs market type capacity-block")
		}
	})
	t.Run("spot, public IP, monitoring and block devices", func(t *testing.T) {
		nc := nodeClass("default")
		nc.Spec.AssociatePublicIPAddress = ptr.To(false)
		nc.Spec.DetailedMonitoring = ptr.To(true)
		nc.Spec.BlockDeviceMappings = []*awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), RootVolume: true, EBS: &awsv1.BlockDevice{
			VolumeSize: ptr.To(resource.MustParse("100Gi")), VolumeType: ptr.To("io2"), IOPS: ptr.To[int64](3000), Encrypted: ptr.To(true),
		}}}
		s := base
		s.NodeClass, s.CapacityType = nc, apisv1.CapacityTypeSpot
		in, err := Input("n", s)
		if err != nil {
			t.Fatal(err)
		}
		d := in.LaunchTemplateData
		if len(d.SecurityGroupIds) != 0 || len(d.NetworkInterfaces) != 1 || aws.ToBool(d.NetworkInterfaces[0].AssociatePublicIpAddress) || d.NetworkInterfaces[0].Groups[0] != "sg-1" {
			t.Errorf("interfaces %+v, groups %v", d.NetworkInterfaces, d.SecurityGroupIds)
		}
		if !aws.ToBool(d.Monitoring.Enabled) {
			t.Error("detailed monitoring off")
		}
		ebs := d.BlockDeviceMappings[0].Ebs
		if aws.ToInt32(ebs.VolumeSize) != 100 || ebs.VolumeType != "io2" || aws.ToInt32(ebs.Iops) != 3000 {
			t.Errorf("volume %+v", ebs)
		}
		if len(d.TagSpecifications) != 2 || d.TagSpecifications[1].ResourceType != ec2types.ResourceTypeSpotInstancesRequest {
			t.Errorf("spot requests are tagged too: %+v", d.TagSpecifications)
		}
	})
	t.Run("user data over EC2's limit is an error naming the NodeClass", func(t *testing.T) {
		s := base
		s.UserData = strings.Repeat("#", MaxUserData+1)
		if _, err := Input("n", s); err == nil || !strings.Contains(err.Error(), "EC2NodeClass default") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bottlerocket default volumes", func(t *testing.T) {
		nc := nodeClass("br")
		nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}
		s := base
		s.NodeClass = nc
		in, _ := Input("n", s)
		if len(in.LaunchTemplateData.BlockDeviceMappings) != 2 {
			t.Errorf("bottlerocket volumes %+v", in.LaunchTemplateData.BlockDeviceMappings)
		}
	})
}

func TestDeleteAllDeletesOnlyTheNodeClassesOwnTemplates(t *testing.T) {
	e := awstest.New(t, awsapi.Options{})
	p := newProvider(t, e)
	a, b := nodeClass("a"), nodeClass("b")
	sa := spec(e, t, a)
	sa2 := sa
	sa2.UserData = "#!/bin/bash\necho two\n"
	for _, s := range []Spec{sa, sa2, spec(e, t, b)} {
		if _, err := p.Ensure(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// A template of Karpenter's for a NodeClass of the same name is not tenon's.
	if _, err := e.EC2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("karpenter.k8s.aws/123"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(sa.ImageID)},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: instance.EC2Tags(sa.Tags)}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteAll(ctx, a); err != nil {
		t.Fatal(err)
	}
	out, err := e.EC2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, lt := range out.LaunchTemplates {
		left = append(left, aws.ToString(lt.LaunchTemplateName))
	}
	if len(left) != 2 || left[0] != "karpenter.k8s.aws/123" || left[1] != p.Name(spec(e, t, b)) {
		t.Fatalf("left %v, want Karpenter's and b's", left)
	}
	if err := p.DeleteAll(ctx, a); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
	// The cache forgot a's templates: ensuring one again recreates it.
	if _, err := p.Ensure(ctx, sa); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EC2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{p.Name(sa)}}); err != nil {
		t.Fatalf("the template was not recreated: %v", err)
	}
}
