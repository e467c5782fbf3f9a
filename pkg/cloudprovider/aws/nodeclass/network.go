package nodeclass

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
)

// tagFilters are the DescribeX filters of selector-term tags: tag:<key>=<value>, or tag-key
// for the value "*" (any value). Keys are sorted so that requests are stable.
func tagFilters(tags map[string]string) []ec2types.Filter {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]ec2types.Filter, 0, len(keys))
	for _, k := range keys {
		if v := tags[k]; v == "*" {
			out = append(out, ec2types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
		} else {
			out = append(out, ec2types.Filter{Name: aws.String("tag:" + k), Values: []string{v}})
		}
	}
	return out
}

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

// subnets resolves subnetSelectorTerms, one DescribeSubnets per term: the union, most free
// addresses first, then by ID.
func (r *resolution) subnets(ctx context.Context) {
	const cond = awsv1.ConditionTypeSubnetsReady
	found := map[string]ec2types.Subnet{}
	for _, term := range r.nc.Spec.SubnetSelectorTerms {
		in := &ec2.DescribeSubnetsInput{Filters: tagFilters(term.Tags)}
		if term.ID != "" {
			in.Filters = append(in.Filters, filter("subnet-id", term.ID))
		}
		for p := ec2.NewDescribeSubnetsPaginator(r.c.opts.EC2, in); p.HasMorePages(); {
			out, err := p.NextPage(ctx)
			if err != nil {
				r.failed(cond, "DescribeSubnets", err)
				return
			}
			for _, s := range out.Subnets {
				found[aws.ToString(s.SubnetId)] = s
			}
		}
	}
	if len(found) == 0 {
		r.nc.Status.Subnets = nil
		r.setFalse(cond, ReasonSubnetsNotFound, "no subnets matched subnetSelectorTerms %s", terms(r.nc.Spec.SubnetSelectorTerms))
		return
	}
	list := make([]ec2types.Subnet, 0, len(found))
	for _, s := range found {
		list = append(list, s)
	}
	slices.SortFunc(list, func(a, b ec2types.Subnet) int {
		if x, y := aws.ToInt32(a.AvailableIpAddressCount), aws.ToInt32(b.AvailableIpAddressCount); x != y {
			return int(y - x)
		}
		return strings.Compare(aws.ToString(a.SubnetId), aws.ToString(b.SubnetId))
	})
	r.nc.Status.Subnets = make([]awsv1.Subnet, 0, len(list))
	for _, s := range list {
		r.nc.Status.Subnets = append(r.nc.Status.Subnets, awsv1.Subnet{
			ID: aws.ToString(s.SubnetId), Zone: aws.ToString(s.AvailabilityZone), ZoneID: aws.ToString(s.AvailabilityZoneId),
		})
	}
	r.setTrue(cond)
}

// securityGroups resolves securityGroupSelectorTerms, one DescribeSecurityGroups per term:
// the union, by ID.
func (r *resolution) securityGroups(ctx context.Context) {
	const cond = awsv1.ConditionTypeSecurityGroupsReady
	found := map[string]ec2types.SecurityGroup{}
	for _, term := range r.nc.Spec.SecurityGroupSelectorTerms {
		in := &ec2.DescribeSecurityGroupsInput{Filters: tagFilters(term.Tags)}
		if term.ID != "" {
			in.Filters = append(in.Filters, filter("group-id", term.ID))
		}
		if term.Name != "" {
			in.Filters = append(in.Filters, filter("group-name", term.Name))
		}
		for p := ec2.NewDescribeSecurityGroupsPaginator(r.c.opts.EC2, in); p.HasMorePages(); {
			out, err := p.NextPage(ctx)
			if err != nil {
				r.failed(cond, "DescribeSecurityGroups", err)
				return
			}
			for _, g := range out.SecurityGroups {
				found[aws.ToString(g.GroupId)] = g
			}
		}
	}
	if len(found) == 0 {
		r.nc.Status.SecurityGroups = nil
		r.setFalse(cond, ReasonSecurityGroupsNotFound, "no security groups matched securityGroupSelectorTerms %s", terms(r.nc.Spec.SecurityGroupSelectorTerms))
		return
	}
	r.nc.Status.SecurityGroups = make([]awsv1.SecurityGroup, 0, len(found))
	for _, g := range found {
		r.nc.Status.SecurityGroups = append(r.nc.Status.SecurityGroups, awsv1.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName)})
	}
	slices.SortFunc(r.nc.Status.SecurityGroups, func(a, b awsv1.SecurityGroup) int { return strings.Compare(a.ID, b.ID) })
	r.setTrue(cond)
}

// placementGroup checks the placement group placementGroupSelector names, if any.
func (r *resolution) placementGroup(ctx context.Context) {
	const cond = awsv1.ConditionTypePlacementGroupReady
	sel := r.nc.Spec.PlacementGroupSelector
	if sel == nil {
		r.setTrue(cond)
		return
	}
	in := &ec2.DescribePlacementGroupsInput{}
	what := ""
	if sel.ID != nil {
		in.GroupIds, what = []string{*sel.ID}, *sel.ID
	} else if sel.Name != nil {
		in.GroupNames, what = []string{*sel.Name}, *sel.Name
	}
	out, err := r.c.opts.EC2.DescribePlacementGroups(ctx, in)
	if err != nil {
		if code := errorCode(err); strings.HasPrefix(code, "InvalidPlacementGroup") || strings.HasPrefix(code, "InvalidGroup") {
			r.setFalse(cond, ReasonPlacementGroupNotFound, "placement group %q not found", what)
			return
		}
		r.failed(cond, "DescribePlacementGroups", err)
		return
	}
	for _, g := range out.PlacementGroups {
		if g.State == ec2types.PlacementGroupStateAvailable {
			r.setTrue(cond)
			return
		}
	}
	r.setFalse(cond, ReasonPlacementGroupNotFound, "placement group %q not found or not available", what)
}
