package awsapi

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// AL2 AMIs are published for Kubernetes versions before 1.33 only, Windows Server 2025 from
// 1.35, each under AWS's parameter names, naming AMIs DescribeImages serves.
func TestAL2AndWindowsParametersArePublishedForTheVersionsAWSPublishesThem(t *testing.T) {
	e := newEnv(t, Options{KubernetesVersions: []string{"1.32", "1.37"}})
	for name, want := range map[string]string{
		"/aws/service/eks/optimized-ami/1.32/amazon-linux-2/recommended/image_id":                                "x86_64",
		"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/recommended/image_id":                          "arm64",
		"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-gpu/recommended/image_id":                            "x86_64",
		"/aws/service/eks/optimized-ami/1.32/amazon-linux-2/amazon-eks-node-1.32-v20261101/image_id":             "x86_64",
		"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/amazon-eks-arm64-node-1.32-v20261101/image_id": "arm64",
		"/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.37/image_id":           "x86_64",
		"/aws/service/ami-windows-latest/Windows_Server-2019-English-Core-EKS_Optimized-1.32/image_id":           "x86_64",
		"/aws/service/ami-windows-latest/Windows_Server-2025-English-Core-EKS_Optimized-1.37/image_id":           "x86_64",
	} {
		id := e.param(t, name)
		out, err := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}})
		if err != nil || len(out.Images) != 1 || string(out.Images[0].Architecture) != want {
			t.Fatalf("%s → %s: %+v (%v)", name, id, out, err)
		}
	}
	for _, name := range []string{
		"/aws/service/eks/optimized-ami/1.37/amazon-linux-2/recommended/image_id",
		"/aws/service/ami-windows-latest/Windows_Server-2025-English-Core-EKS_Optimized-1.32/image_id",
	} {
		if _, err := e.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)}); errorCode(err) != "ParameterNotFound" {
			t.Errorf("%s: %v, want ParameterNotFound", name, err)
		}
	}
	id := e.param(t, "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.37/image_id")
	out, _ := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}})
	if out.Images[0].Platform != "windows" { // as EC2 spells it (the SDK enum says "Windows")
		t.Errorf("Windows AMI platform %q", out.Images[0].Platform)
	}
}

// Added images are found by tag, tag key, name wildcard and owner; a deprecated one only with
// IncludeDeprecated or by ID; they survive a new release being published.
func TestAddedImagesAreSelectedByTagsNameAndOwner(t *testing.T) {
	e := newEnv(t, Options{})
	if err := e.s.AddImage(Image{Name: "golden-2026-11", Arch: "arm64", Tags: map[string]string{"team": "ml", "golden": "yes"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.AddImage(Image{ID: "ami-0aaaaaaaaaaaaaaa1", Name: "golden-2026-10", Deprecation: epoch.Add(-time.Hour), Tags: map[string]string{"team": "ml"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.AddImage(Image{Name: "bad", Arch: "sparc"}); err == nil {
		t.Error("an image of an unknown architecture was added")
	}
	e.s.PublishRelease("v20261201", "")
	describe := func(in *ec2.DescribeImagesInput) []ec2types.Image {
		t.Helper()
		out, err := e.ec2.DescribeImages(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return out.Images
	}
	tag := func(k, v string) ec2types.Filter {
		return ec2types.Filter{Name: aws.String("tag:" + k), Values: []string{v}}
	}
	if got := describe(&ec2.DescribeImagesInput{Filters: []ec2types.Filter{tag("team", "ml")}}); len(got) != 1 || aws.ToString(got[0].Name) != "golden-2026-11" {
		t.Errorf("by tag without deprecated: %d images", len(got))
	}
	if got := describe(&ec2.DescribeImagesInput{Filters: []ec2types.Filter{tag("team", "ml")}, IncludeDeprecated: aws.Bool(true)}); len(got) != 2 {
		t.Errorf("by tag with deprecated: %d images, want 2", len(got))
	} else if aws.ToString(got[1].DeprecationTime) == "" {
		t.Errorf("deprecated image without its deprecation time: %+v", got[1])
	}
	if got := describe(&ec2.DescribeImagesInput{Owners: []string{"self"}, Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"golden-*"}}}, IncludeDeprecated: aws.Bool(true)}); len(got) != 2 {
		t.Errorf("owner self, name golden-*: %d images", len(got))
	}
	if got := describe(&ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"golden-*"}}}}); len(got) != 0 {
		t.Errorf("owner amazon found %d of the account's images", len(got))
	}
	if got := describe(&ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"golden"}}}}); len(got) != 1 || got[0].Architecture != ec2types.ArchitectureValuesArm64 {
		t.Errorf("by tag key: %+v", got)
	}
	if got := describe(&ec2.DescribeImagesInput{ImageIds: []string{"ami-0aaaaaaaaaaaaaaa1"}}); len(got) != 1 {
		t.Errorf("deprecated image by ID: %d images", len(got))
	}
}

// An access-denied fault answers with each service's own code, which the SDK does not retry.
func TestAccessDeniedFaultsAnswerWithEachServicesCode(t *testing.T) {
	e := newEnv(t, Options{})
	e.s.InjectFault(Fault{Kind: FaultAccessDenied})
	_, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	wantCode(t, err, "UnauthorizedOperation")
	_, err = e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("p")})
	wantCode(t, err, "AccessDenied")
	_, err = e.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/x")})
	wantCode(t, err, "AccessDeniedException")
	if hits := e.s.FaultHits(); hits[0] != 3 {
		t.Errorf("%d requests hit the fault, want 3 (no retries)", hits[0])
	}
}

// Placement groups are found by name and by ID; an unknown one is EC2's error.
func TestPlacementGroupsByNameAndID(t *testing.T) {
	e := newEnv(t, Options{})
	if err := e.s.AddPlacementGroup(PlacementGroup{Name: "training", Strategy: "cluster"}); err != nil {
		t.Fatal(err)
	}
	out, err := e.ec2.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{GroupNames: []string{"training"}})
	if err != nil || len(out.PlacementGroups) != 1 {
		t.Fatalf("by name: %+v (%v)", out, err)
	}
	pg := out.PlacementGroups[0]
	if pg.State != ec2types.PlacementGroupStateAvailable || pg.Strategy != ec2types.PlacementStrategyCluster || aws.ToString(pg.GroupId) == "" {
		t.Errorf("group %+v", pg)
	}
	byID, err := e.ec2.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{GroupIds: []string{aws.ToString(pg.GroupId)}})
	if err != nil || len(byID.PlacementGroups) != 1 || aws.ToString(byID.PlacementGroups[0].GroupName) != "training" {
		t.Errorf("by ID: %+v (%v)", byID, err)
	}
	_, err = e.ec2.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{GroupNames: []string{"nope"}})
	wantCode(t, err, "InvalidPlacementGroup.Unknown")
}
