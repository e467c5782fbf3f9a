package v1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
)

func base() *awsv1.EC2NodeClass {
	size := resource.MustParse("20Gi")
	return &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		Role:                       "KarpenterNodeRole-demo",
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		Tags:                       map[string]string{"team": "a"},
		BlockDeviceMappings: []*awsv1.BlockDeviceMapping{
			{DeviceName: ptr.To("/dev/xvda"), RootVolume: true, EBS: &awsv1.BlockDevice{VolumeSize: &size}},
			{DeviceName: ptr.To("/dev/xvdb"), EBS: &awsv1.BlockDevice{SnapshotID: ptr.To("snap-1")}},
		},
	}}
}

// The hash changes with what shapes a launched instance and with nothing else: selector terms
// drift by what they resolve to, and writing out a default or the family an alias implies, or
// reordering block devices, is no change.
func TestHash(t *testing.T) {
	h := base().Hash("ca")
	same := map[string]func(*awsv1.EC2NodeClass){
		"the family the alias implies": func(nc *awsv1.EC2NodeClass) { nc.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyAL2023) },
		"another alias version":        func(nc *awsv1.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "al2023@v20240625" },
		"subnet terms": func(nc *awsv1.EC2NodeClass) {
			nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{ID: "subnet-1"}}
		},
		"security group terms": func(nc *awsv1.EC2NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms = []awsv1.SecurityGroupSelectorTerm{{Name: "web"}}
		},
		"capacity reservation terms": func(nc *awsv1.EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{ID: "cr-1"}}
		},
		"ipPrefixCount":                    func(nc *awsv1.EC2NodeClass) { nc.Spec.IPPrefixCount = ptr.To(int32(2)) },
		"default metadata options written": func(nc *awsv1.EC2NodeClass) { m := nc.Spec.GetMetadataOptions(); nc.Spec.MetadataOptions = &m },
		"detailedMonitoring false":         func(nc *awsv1.EC2NodeClass) { nc.Spec.DetailedMonitoring = ptr.To(false) },
		"empty kubelet":                    func(nc *awsv1.EC2NodeClass) { nc.Spec.Kubelet = &awsv1.KubeletConfiguration{} },
		"block devices reordered": func(nc *awsv1.EC2NodeClass) {
			b := nc.Spec.BlockDeviceMappings
			b[0], b[1] = b[1], b[0]
		},
		"status": func(nc *awsv1.EC2NodeClass) {
			nc.Status.Subnets = []awsv1.Subnet{{ID: "subnet-1", Zone: "us-west-2a"}}
			nc.Status.InstanceProfile = "p"
		},
	}
	for name, change := range same {
		nc := base()
		change(nc)
		if got := nc.Hash("ca"); got != h {
			t.Errorf("%s changed the hash", name)
		}
	}
	big := resource.MustParse("100Gi")
	differ := map[string]func(*awsv1.EC2NodeClass){
		"the CA bundle":    func(nc *awsv1.EC2NodeClass) {}, // hashed with another bundle below
		"user data":        func(nc *awsv1.EC2NodeClass) { nc.Spec.UserData = ptr.To("echo hi") },
		"role":             func(nc *awsv1.EC2NodeClass) { nc.Spec.Role = "other" },
		"instance profile": func(nc *awsv1.EC2NodeClass) { nc.Spec.Role, nc.Spec.InstanceProfile = "", ptr.To("profile") },
		"a tag":            func(nc *awsv1.EC2NodeClass) { nc.Spec.Tags["owner"] = "me" },
		"kubelet maxPods": func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: ptr.To(int32(110))}
		},
		"root volume size":      func(nc *awsv1.EC2NodeClass) { nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = &big },
		"instance store policy": func(nc *awsv1.EC2NodeClass) { nc.Spec.InstanceStorePolicy = ptr.To(awsv1.InstanceStorePolicyRAID0) },
		"metadata tokens optional": func(nc *awsv1.EC2NodeClass) {
			nc.Spec.MetadataOptions = &awsv1.MetadataOptions{HTTPTokens: ptr.To("optional")}
		},
		"detailed monitoring":  func(nc *awsv1.EC2NodeClass) { nc.Spec.DetailedMonitoring = ptr.To(true) },
		"public IP":            func(nc *awsv1.EC2NodeClass) { nc.Spec.AssociatePublicIPAddress = ptr.To(false) },
		"AMI family Custom":    func(nc *awsv1.EC2NodeClass) { nc.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyCustom) },
		"another alias family": func(nc *awsv1.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "bottlerocket@latest" },
		"network interfaces": func(nc *awsv1.EC2NodeClass) {
			nc.Spec.NetworkInterfaces = []*awsv1.NetworkInterface{{InterfaceType: awsv1.InterfaceTypeInterface}}
		},
		"placement group": func(nc *awsv1.EC2NodeClass) {
			nc.Spec.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: ptr.To("pg")}
		},
		"cpu options": func(nc *awsv1.EC2NodeClass) {
			nc.Spec.CPUOptions = &awsv1.CPUOptions{NestedVirtualization: ptr.To("enabled")}
		},
	}
	for name, change := range differ {
		nc := base()
		change(nc)
		bundle := "ca"
		if name == "the CA bundle" {
			bundle = "other-ca"
		}
		if nc.Hash(bundle) == h {
			t.Errorf("%s left the hash unchanged", name)
		}
	}
	if awsv1.EC2NodeClassHashVersion == "v5" || awsv1.EC2NodeClassHashVersion == "v6" {
		t.Error("the hash version must not be one Karpenter writes: its hashes are computed differently")
	}
}
