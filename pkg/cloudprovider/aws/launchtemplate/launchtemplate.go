// Package launchtemplate keeps the EC2 launch templates the AWS provider launches through: one
// per distinct (AMI, user data, security groups, instance profile, capacity reservation, NodeClass
// static hash), named after a hash of all of it, created when absent and reused otherwise, and
// deleted with their EC2NodeClass.
//
// Names are "tenon.sh/<hash>", not Karpenter's "karpenter.k8s.aws/<hash>": the two compute their
// hashes differently, and a cluster migrating from Karpenter (or running both for a while) must
// never have one autoscaler launch through, or delete, the other's templates. DeleteAll only
// deletes templates with tenon's prefix.
package launchtemplate

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
)

// NamePrefix starts the name of every launch template tenon makes.
const NamePrefix = "tenon.sh/"

// EC2API is the part of *ec2.Client the provider calls.
type EC2API interface {
	CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error)
	DescribeLaunchTemplates(ctx context.Context, in *ec2.DescribeLaunchTemplatesInput, opts ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplatesOutput, error)
	DeleteLaunchTemplate(ctx context.Context, in *ec2.DeleteLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error)
}

// Options configure New.
type Options struct {
	EC2         EC2API
	ClusterName string
	// CacheTTL is how long a template known to exist is used without asking EC2 again
	// (default 5 minutes); Invalidate forgets one at once.
	CacheTTL time.Duration
}

// Provider creates and reuses launch templates. It is safe for concurrent use.
type Provider struct {
	ec2     EC2API
	cluster string
	ttl     time.Duration

	mu       sync.Mutex
	known    map[string]time.Time     // name → until when it is known to exist
	inflight map[string]chan struct{} // names being ensured
}

// New returns a provider.
func New(opts Options) (*Provider, error) {
	if opts.EC2 == nil || opts.ClusterName == "" {
		return nil, errors.New("launchtemplate: Options.EC2 and Options.ClusterName are required")
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = 5 * time.Minute
	}
	return &Provider{ec2: opts.EC2, cluster: opts.ClusterName, ttl: opts.CacheTTL, known: map[string]time.Time{}, inflight: map[string]chan struct{}{}}, nil
}

// Spec is what one launch template says.
type Spec struct {
	NodeClass *awsv1.EC2NodeClass
	// NodeClassHash is the NodeClass's static hash (awsv1.EC2NodeClass.Hash).
	NodeClassHash string
	ImageID       string
	// UserData is the rendered user data, not encoded.
	UserData        string
	SecurityGroups  []string
	InstanceProfile string
	// CapacityType decides the tagged resources (spot requests are tagged too) and, with
	// ReservationID, the reservation targeting.
	CapacityType    string
	ReservationID   string
	ReservationType awsv1.CapacityReservationType
	// Tags go on the template, and (from the template) on the network interfaces.
	Tags map[string]string
}

// Name returns the template's deterministic name: the prefix and a hash of the cluster and
// everything in spec.
func (p *Provider) Name(spec Spec) string {
	sgs := slices.Clone(spec.SecurityGroups)
	slices.Sort(sgs)
	spot := spec.CapacityType == apisv1.CapacityTypeSpot
	key := struct {
		Cluster, NodeClass, Hash, Image, UserData, Profile, Reservation string
		ReservationType                                                 awsv1.CapacityReservationType
		SecurityGroups                                                  []string
		Spot                                                            bool
		Tags                                                            map[string]string
	}{p.cluster, spec.NodeClass.Name, spec.NodeClassHash, spec.ImageID, spec.UserData, spec.InstanceProfile, spec.ReservationID, spec.ReservationType, sgs, spot, spec.Tags}
	b, _ := json.Marshal(key) // plain strings, slices and a string map: cannot fail
	h := fnv.New64a()
	_, _ = h.Write(b)
	return NamePrefix + strconv.FormatUint(h.Sum64(), 10)
}

// Ensure returns the name of spec's template, creating the template when EC2 does not have it.
// Concurrent calls for one template make one set of calls.
func (p *Provider) Ensure(ctx context.Context, spec Spec) (string, error) {
	name := p.Name(spec)
	for {
		p.mu.Lock()
		if until, ok := p.known[name]; ok && time.Now().Before(until) {
			p.mu.Unlock()
			return name, nil
		}
		if wait, ok := p.inflight[name]; ok {
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-wait:
			}
			continue
		}
		done := make(chan struct{})
		p.inflight[name] = done
		p.mu.Unlock()

		err := p.ensure(ctx, name, spec)
		p.mu.Lock()
		delete(p.inflight, name)
		if err == nil {
			p.known[name] = time.Now().Add(p.ttl)
		}
		p.mu.Unlock()
		close(done)
		if err != nil {
			return "", err
		}
		return name, nil
	}
}

// Invalidate forgets that a template exists (CreateFleet said it does not).
func (p *Provider) Invalidate(name string) {
	p.mu.Lock()
	delete(p.known, name)
	p.mu.Unlock()
}

func (p *Provider) ensure(ctx context.Context, name string, spec Spec) error {
	_, err := p.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err == nil {
		return nil
	}
	if !hasCode(err, "InvalidLaunchTemplateName.NotFoundException") {
		return fmt.Errorf("describing launch template %s: %w", name, err)
	}
	in, err := Input(name, spec)
	if err != nil {
		return err
	}
	if _, err := p.ec2.CreateLaunchTemplate(ctx, in); err != nil && !hasCode(err, "InvalidLaunchTemplateName.AlreadyExistsException") {
		return fmt.Errorf("creating launch template %s for EC2NodeClass %s: %w", name, spec.NodeClass.Name, err)
	}
	return nil
}

// IsNotFound reports whether err says a launch template does not exist.
func IsNotFound(err error) bool {
	return hasCode(err, "InvalidLaunchTemplateName.NotFoundException") || hasCode(err, "InvalidLaunchTemplateId.NotFound")
}

func hasCode(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}

// DeleteAll deletes every template tenon made for the NodeClass in this cluster (for the
// NodeClass's finalizer). Templates already gone are not an error.
func (p *Provider) DeleteAll(ctx context.Context, nc *awsv1.EC2NodeClass) error {
	pages := ec2.NewDescribeLaunchTemplatesPaginator(p.ec2, &ec2.DescribeLaunchTemplatesInput{
		Filters: []ec2types.Filter{
			{Name: aws.String("tag:" + instance.TagEKSClusterName), Values: []string{p.cluster}},
			{Name: aws.String("tag:" + instance.TagEC2NodeClass), Values: []string{nc.Name}},
			{Name: aws.String("launch-template-name"), Values: []string{NamePrefix + "*"}},
		},
	})
	var names []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing the launch templates of EC2NodeClass %s: %w", nc.Name, err)
		}
		for _, lt := range page.LaunchTemplates {
			names = append(names, aws.ToString(lt.LaunchTemplateName))
		}
	}
	var errs []error
	for _, name := range names {
		p.Invalidate(name)
		if _, err := p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)}); err != nil && !IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting launch template %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// MaxUserData is the most user data EC2 takes, in bytes before base64 encoding.
const MaxUserData = 16 << 10

// Input builds the CreateLaunchTemplate request for spec.
func Input(name string, spec Spec) (*ec2.CreateLaunchTemplateInput, error) {
	nc := spec.NodeClass
	if len(spec.UserData) > MaxUserData {
		return nil, fmt.Errorf("EC2NodeClass %s: the user data is %d bytes with tenon's settings merged in; EC2 takes at most %d", nc.Name, len(spec.UserData), MaxUserData)
	}
	bdms, err := blockDevices(nc)
	if err != nil {
		return nil, err
	}
	md := nc.Spec.GetMetadataOptions()
	data := &ec2types.RequestLaunchTemplateData{
		ImageId:             aws.String(spec.ImageID),
		BlockDeviceMappings: bdms,
		Monitoring:          &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(aws.ToBool(nc.Spec.DetailedMonitoring))},
		MetadataOptions: &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
			HttpEndpoint:            ec2types.LaunchTemplateInstanceMetadataEndpointState(aws.ToString(md.HTTPEndpoint)),
			HttpProtocolIpv6:        ec2types.LaunchTemplateInstanceMetadataProtocolIpv6(aws.ToString(md.HTTPProtocolIPv6)),
			HttpPutResponseHopLimit: aws.Int32(int32(aws.ToInt64(md.HTTPPutResponseHopLimit))),
			HttpTokens:              ec2types.LaunchTemplateHttpTokensState(aws.ToString(md.HTTPTokens)),
			// Instance tags in the metadata would expose keys with slashes, which IMDS cannot.
			InstanceMetadataTags: ec2types.LaunchTemplateInstanceMetadataTagsStateDisabled,
		},
		TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: instance.EC2Tags(spec.Tags)}},
	}
	if spec.UserData != "" {
		data.UserData = aws.String(base64.StdEncoding.EncodeToString([]byte(spec.UserData)))
	}
	if spec.InstanceProfile != "" {
		data.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(spec.InstanceProfile)}
	}
	if spec.CapacityType == apisv1.CapacityTypeSpot {
		data.TagSpecifications = append(data.TagSpecifications, ec2types.LaunchTemplateTagSpecificationRequest{ResourceType: ec2types.ResourceTypeSpotInstancesRequest, Tags: instance.EC2Tags(spec.Tags)})
	}
	if nc.Spec.AssociatePublicIPAddress != nil {
		// EC2 takes the public-IP choice only on an interface, and then the groups too.
		data.NetworkInterfaces = []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: aws.Int32(0), AssociatePublicIpAddress: nc.Spec.AssociatePublicIPAddress, Groups: spec.SecurityGroups,
		}}
	} else {
		data.SecurityGroupIds = spec.SecurityGroups
	}
	if spec.CapacityType == apisv1.CapacityTypeReserved && spec.ReservationID != "" {
		data.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(spec.ReservationID)},
		}
		if spec.ReservationType == awsv1.CapacityReservationTypeCapacityBlock {
			data.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeCapacityBlock}
		}
	} else {
		// On-demand and spot launches stay out of open reservations: those are sold as the
		// reserved capacity type, and an instance that silently consumed one would be priced
		// and counted wrongly.
		data.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{CapacityReservationPreference: ec2types.CapacityReservationPreferenceNone}
	}
	return &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: data,
		TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: instance.EC2Tags(spec.Tags)}},
	}, nil
}

// blockDevices returns the NodeClass's block devices, or the AMI family's defaults: a 20 GiB
// encrypted gp3 root volume (/dev/xvda) for AL2 and AL2023; a 4 GiB OS volume and a 20 GiB
// data volume (/dev/xvdb) for Bottlerocket; the AMI's own for Custom. Sizes are in GiB,
// rounded up.
func blockDevices(nc *awsv1.EC2NodeClass) ([]ec2types.LaunchTemplateBlockDeviceMappingRequest, error) {
	gp3 := func(device string, gib int32) ec2types.LaunchTemplateBlockDeviceMappingRequest {
		return ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: aws.String(device), Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{
			VolumeSize: aws.Int32(gib), VolumeType: ec2types.VolumeTypeGp3, Encrypted: aws.Bool(true), DeleteOnTermination: aws.Bool(true),
		}}
	}
	if len(nc.Spec.BlockDeviceMappings) == 0 {
		switch nc.AMIFamily() {
		case awsv1.AMIFamilyAL2, awsv1.AMIFamilyAL2023:
			return []ec2types.LaunchTemplateBlockDeviceMappingRequest{gp3("/dev/xvda", 20)}, nil
		case awsv1.AMIFamilyBottlerocket:
			return []ec2types.LaunchTemplateBlockDeviceMappingRequest{gp3("/dev/xvda", 4), gp3("/dev/xvdb", 20)}, nil
		}
		return nil, nil
	}
	var out []ec2types.LaunchTemplateBlockDeviceMappingRequest
	for i, bdm := range nc.Spec.BlockDeviceMappings {
		if bdm == nil || bdm.DeviceName == nil {
			return nil, fmt.Errorf("EC2NodeClass %s: block device mapping %d has no deviceName", nc.Name, i)
		}
		m := ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: bdm.DeviceName}
		if e := bdm.EBS; e != nil {
			ebs := &ec2types.LaunchTemplateEbsBlockDeviceRequest{
				DeleteOnTermination: e.DeleteOnTermination, Encrypted: e.Encrypted, KmsKeyId: e.KMSKeyID, SnapshotId: e.SnapshotID,
				VolumeInitializationRate: e.VolumeInitializationRate,
			}
			if e.IOPS != nil {
				ebs.Iops = aws.Int32(int32(*e.IOPS))
			}
			if e.Throughput != nil {
				ebs.Throughput = aws.Int32(int32(*e.Throughput))
			}
			if e.VolumeType != nil {
				ebs.VolumeType = ec2types.VolumeType(*e.VolumeType)
			}
			if e.VolumeSize != nil {
				const gib = 1 << 30
				ebs.VolumeSize = aws.Int32(int32((e.VolumeSize.Value() + gib - 1) / gib))
			}
			m.Ebs = ebs
		}
		out = append(out, m)
	}
	return out, nil
}
