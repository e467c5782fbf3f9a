package nodeclass

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/go-logr/logr"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Tag keys tenon puts on what it creates (Karpenter's).
const (
	TagEC2NodeClass   = awsv1.Group + "/ec2nodeclass"
	TagEKSClusterName = "eks:eks-cluster-name"
)

// ClusterTag is the tag key marking a resource as the cluster's: kubernetes.io/cluster/<name>,
// with the value "owned".
func ClusterTag(cluster string) string { return "kubernetes.io/cluster/" + cluster }

// ProfileName is the name of the instance profile tenon creates for an EC2NodeClass with a
// role: <cluster>_<hash of region and class name>, the same on every reconcile and restart, so
// that a profile is found again rather than created twice. The cluster part is shortened when
// the name would pass IAM's 128 characters.
func ProfileName(cluster, region, class string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(region + "/" + class))
	suffix := "_" + strconv.FormatUint(h.Sum64(), 10)
	if len(cluster)+len(suffix) > 128 {
		cluster = cluster[:128-len(suffix)]
	}
	return cluster + suffix
}

// profilePath is the IAM path of the profiles tenon creates.
func profilePath(cluster, region string) string {
	return "/karpenter/" + region + "/" + cluster + "/"
}

// profileTags are the tags of a profile tenon creates: the class's own tags, then the
// cluster's, the class's and the region's.
func (r *resolution) profileTags() map[string]string {
	tags := map[string]string{}
	for k, v := range r.nc.Spec.Tags {
		tags[k] = v
	}
	cluster := r.c.opts.ClusterName
	tags[ClusterTag(cluster)] = "owned"
	tags[TagEKSClusterName] = cluster
	tags[TagEC2NodeClass] = r.nc.Name
	tags[apisv1.LabelRegion] = r.c.opts.Region
	return tags
}

func iamTags(m map[string]string) []iamtypes.Tag {
	out := make([]iamtypes.Tag, 0, len(m))
	for k, v := range m {
		out = append(out, iamtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out
}

// instanceProfile resolves the instance profile: spec.instanceProfile must exist; for
// spec.role tenon's own profile is found or created, tagged, and given the role.
func (r *resolution) instanceProfile(ctx context.Context) {
	const cond = awsv1.ConditionTypeInstanceProfileReady
	iamc := r.c.opts.IAM
	if name := aws.ToString(r.nc.Spec.InstanceProfile); name != "" {
		if _, err := iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil {
			if errorCode(err) == "NoSuchEntity" {
				r.nc.Status.InstanceProfile = ""
				r.setFalse(cond, ReasonInstanceProfileNotFound, "instance profile %q not found", name)
				return
			}
			r.failed(cond, "GetInstanceProfile "+name, err)
			return
		}
		r.nc.Status.InstanceProfile = name
		r.setTrue(cond)
		return
	}
	role := r.nc.Spec.Role
	if role == "" {
		r.setFalse(cond, ReasonInstanceProfileNotFound, "neither spec.role nor spec.instanceProfile is set")
		return
	}
	// AddRoleToInstanceProfile takes a role name, not a path.
	if i := strings.LastIndexByte(role, '/'); i >= 0 {
		role = role[i+1:]
	}
	name := ProfileName(r.c.opts.ClusterName, r.c.opts.Region, r.nc.Name)
	profile, err := r.ensureProfile(ctx, name)
	if err != nil {
		r.failed(cond, "instance profile "+name, err)
		return
	}
	for _, have := range profile.Roles {
		if h := aws.ToString(have.RoleName); h != role {
			if _, err := iamc.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String(h)}); err != nil && errorCode(err) != "NoSuchEntity" {
				r.failed(cond, fmt.Sprintf("removing role %s from instance profile %s", h, name), err)
				return
			}
			r.c.opts.Log.Info("replaced the role of an instance profile", "ec2nodeclass", r.nc.Name, "instanceProfile", name, "from", h, "to", role)
			profile.Roles = nil
		}
	}
	if len(profile.Roles) == 0 {
		if _, err := iamc.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String(role)}); err != nil {
			if errorCode(err) == "NoSuchEntity" {
				r.nc.Status.InstanceProfile = ""
				r.setFalse(cond, ReasonRoleNotFound, "role %q not found for instance profile %s", role, name)
				return
			}
			if errorCode(err) != "LimitExceeded" { // a concurrent reconcile added it first
				r.failed(cond, fmt.Sprintf("adding role %s to instance profile %s", role, name), err)
				return
			}
		}
	}
	r.nc.Status.InstanceProfile = name
	r.setTrue(cond)
}

// ensureProfile returns tenon's profile, creating it when it does not exist and adding the
// tags it lacks when it does.
func (r *resolution) ensureProfile(ctx context.Context, name string) (*iamtypes.InstanceProfile, error) {
	iamc := r.c.opts.IAM
	tags := r.profileTags()
	out, err := iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err == nil {
		var missing []iamtypes.Tag
		for k, v := range tags {
			if !hasTag(out.InstanceProfile.Tags, k, v) {
				missing = append(missing, iamtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
			}
		}
		if len(missing) > 0 {
			if _, err := iamc.TagInstanceProfile(ctx, &iam.TagInstanceProfileInput{InstanceProfileName: aws.String(name), Tags: missing}); err != nil {
				return nil, fmt.Errorf("tagging: %w", err)
			}
		}
		return out.InstanceProfile, nil
	}
	if errorCode(err) != "NoSuchEntity" {
		return nil, err
	}
	created, err := iamc.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
		InstanceProfileName: aws.String(name), Path: aws.String(profilePath(r.c.opts.ClusterName, r.c.opts.Region)), Tags: iamTags(tags),
	})
	if err != nil {
		if errorCode(err) == "EntityAlreadyExists" {
			out, err := iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
			if err != nil {
				return nil, err
			}
			return out.InstanceProfile, nil
		}
		return nil, fmt.Errorf("creating: %w", err)
	}
	r.c.opts.Log.Info("created an instance profile", "ec2nodeclass", r.nc.Name, "instanceProfile", name)
	return created.InstanceProfile, nil
}

func hasTag(tags []iamtypes.Tag, k, v string) bool {
	for _, t := range tags {
		if aws.ToString(t.Key) == k && aws.ToString(t.Value) == v {
			return true
		}
	}
	return false
}

// deleteProfile deletes the instance profile tenon created for a class, if it exists and its
// tags say it is this cluster's profile of this class; a profile the user named is never
// touched.
func (c *Controller) deleteProfile(ctx context.Context, log logr.Logger, nc *awsv1.EC2NodeClass) error {
	if nc.Spec.Role == "" {
		return nil
	}
	name := ProfileName(c.opts.ClusterName, c.opts.Region, nc.Name)
	out, err := c.opts.IAM.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil {
		if errorCode(err) == "NoSuchEntity" {
			return nil
		}
		return fmt.Errorf("getting instance profile %s: %w", name, err)
	}
	p := out.InstanceProfile
	if !hasTag(p.Tags, ClusterTag(c.opts.ClusterName), "owned") || !hasTag(p.Tags, TagEC2NodeClass, nc.Name) {
		log.Info("not deleting an instance profile without this cluster's and class's tags", "instanceProfile", name)
		return nil
	}
	for _, role := range p.Roles {
		if _, err := c.opts.IAM.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: role.RoleName}); err != nil && errorCode(err) != "NoSuchEntity" {
			return fmt.Errorf("removing role %s from instance profile %s: %w", aws.ToString(role.RoleName), name, err)
		}
	}
	if _, err := c.opts.IAM.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil && errorCode(err) != "NoSuchEntity" {
		return fmt.Errorf("deleting instance profile %s: %w", name, err)
	}
	log.Info("deleted the instance profile", "instanceProfile", name)
	return nil
}
