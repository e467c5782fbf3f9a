package instance

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/internal/awstest"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

var ctx = context.Background()

type env struct {
	*awstest.Env
	p       *Provider
	subnets []awsv1.Subnet
	image   string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{Env: awstest.New(t, awsapi.Options{})}
	p, err := New(Options{EC2: e.EC2, ClusterName: "tenon"})
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
	e.subnets = e.Subnets(t)
	e.image = e.Image(t, "amazon-eks-node-al2023-x86_64-standard-1.37-*")
	if _, err := e.EC2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("tenon-test"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(e.image)},
	}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) request(claim string, capacityType string, types ...string) LaunchRequest {
	var cands []Candidate
	for i, it := range types {
		for _, z := range []string{"us-east-1a", "us-east-1b"} {
			cands = append(cands, Candidate{InstanceType: it, Zone: z, Price: float64(i)})
		}
	}
	return LaunchRequest{
		CapacityType: capacityType,
		Configs:      []LaunchConfig{{TemplateName: "tenon-test", Overrides: Overrides(cands, e.subnets, e.image, nil)}},
		Tags: map[string]string{
			TagEKSClusterName: "tenon", TagClusterPrefix + "tenon": TagValueOwned, TagNodeClaim: claim,
			TagNodePool: "default", TagEC2NodeClass: "default", TagName: "default/" + claim,
		},
	}
}

func TestLaunchTagsAndFindsTheInstance(t *testing.T) {
	e := newEnv(t)
	inst, err := e.p.Launch(ctx, e.request("claim-a", apisv1.CapacityTypeOnDemand, "m5.large", "m5.xlarge"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Type != "m5.large" || inst.ImageID != e.image || inst.Zone == "" {
		t.Fatalf("launched %+v, want the cheapest type with the image", inst)
	}
	got, err := e.p.FindByClaim(ctx, "claim-a")
	if err != nil || got == nil || got.ID != inst.ID {
		t.Fatalf("FindByClaim: %+v, %v; want %s", got, err, inst.ID)
	}
	for k, v := range map[string]string{TagNodeClaim: "claim-a", TagEKSClusterName: "tenon", "kubernetes.io/cluster/tenon": "owned", TagName: "default/claim-a"} {
		if got.Tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, got.Tags[k], v)
		}
	}
	if none, err := e.p.FindByClaim(ctx, "claim-b"); err != nil || none != nil {
		t.Fatalf("FindByClaim(claim-b) = %+v, %v; want none", none, err)
	}
	list, err := e.p.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != inst.ID {
		t.Fatalf("List = %+v, %v", list, err)
	}
}

func TestLaunchReportsExactlyTheOfferingsWithoutCapacity(t *testing.T) {
	e := newEnv(t)
	for _, z := range []string{"us-east-1a", "us-east-1b"} {
		e.Server.SetInsufficientCapacity("m5.large", z, apisv1.CapacityTypeOnDemand, true)
	}
	var heard []cloudprovider.Offering
	inst, err := e.p.Launch(ctx, e.request("c", apisv1.CapacityTypeOnDemand, "m5.large", "m5.xlarge"), func(o []cloudprovider.Offering) { heard = o })
	if err != nil || inst.Type != "m5.xlarge" {
		t.Fatalf("launch = %+v, %v; want m5.xlarge after m5.large ran out", inst, err)
	}
	if len(heard) != 2 || heard[0].InstanceType != "m5.large" || heard[1].InstanceType != "m5.large" {
		t.Fatalf("heard %v, want both zones of m5.large", heard)
	}
	for _, z := range []string{"us-east-1a", "us-east-1b"} {
		e.Server.SetInsufficientCapacity("m5.xlarge", z, apisv1.CapacityTypeOnDemand, true)
	}
	_, err = e.p.Launch(ctx, e.request("d", apisv1.CapacityTypeOnDemand, "m5.large", "m5.xlarge"), nil)
	var ice *cloudprovider.InsufficientCapacityError
	if !errors.As(err, &ice) || len(ice.Offerings) != 4 {
		t.Fatalf("err = %v, want insufficient capacity naming the 4 offerings", err)
	}
}

func TestThrottlingAndServerErrorsAreRetriedAndNeverCapacity(t *testing.T) {
	e := newEnv(t)
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultThrottle, Count: 2})
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultServerError, Count: 1})
	if _, err := e.p.Launch(ctx, e.request("a", apisv1.CapacityTypeOnDemand, "m5.large"), nil); err != nil {
		t.Fatalf("three transient faults should be retried by the SDK: %v", err)
	}
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultThrottle})
	_, err := e.p.Launch(ctx, e.request("b", apisv1.CapacityTypeOnDemand, "m5.large"), nil)
	if err == nil || cloudprovider.IsInsufficientCapacity(err) {
		t.Fatalf("persistent throttling: err = %v, want a plain error, never insufficient capacity", err)
	}
	if n := len(e.Server.Instances()); n != 1 {
		t.Fatalf("%d instances, want 1", n)
	}
}

func TestConcurrentGetsShareDescribeCalls(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for _, c := range []string{"a", "b", "c"} {
		inst, err := e.p.Launch(ctx, e.request(c, apisv1.CapacityTypeOnDemand, "m5.large"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, inst.ID)
	}
	calls := e.Calls("DescribeInstances")
	var wg sync.WaitGroup
	errs := make([]error, 100)
	for i := range 100 {
		wg.Go(func() {
			id := ids[i%len(ids)]
			if i%10 == 9 {
				id = "i-0000000000000dead"
			}
			inst, err := e.p.Get(ctx, id)
			switch {
			case i%10 == 9 && !cloudprovider.IsNodeClaimNotFound(err):
				errs[i] = errors.New("a missing instance should be not found, got " + errString(err))
			case i%10 != 9 && (err != nil || inst.ID != id):
				errs[i] = errors.New("get " + id + ": " + errString(err))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := calls(); n > 3 {
		t.Fatalf("100 concurrent Gets made %d DescribeInstances calls, want at most 3", n)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestDeleteIsIdempotentAndBatched(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for _, c := range []string{"a", "b", "c", "d"} {
		inst, err := e.p.Launch(ctx, e.request(c, apisv1.CapacityTypeOnDemand, "m5.large"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, inst.ID)
	}
	calls := e.Calls("TerminateInstances")
	var wg sync.WaitGroup
	errs := make([]error, len(ids))
	for i, id := range ids {
		wg.Go(func() { errs[i] = e.p.Delete(ctx, id) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := calls(); n != 1 {
		t.Fatalf("4 concurrent Deletes made %d TerminateInstances calls, want 1", n)
	}
	// The endpoint terminates at once (no shutdown delay): deleting again is not found.
	for _, id := range ids {
		if err := e.p.Delete(ctx, id); !cloudprovider.IsNodeClaimNotFound(err) {
			t.Fatalf("second Delete(%s) = %v, want not found", id, err)
		}
	}
	if err := e.p.Delete(ctx, "i-0000000000000dead"); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Fatalf("Delete of an unknown instance = %v, want not found", err)
	}
	if list, err := e.p.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("List after deleting everything = %v, %v", list, err)
	}
}

func TestParseProviderID(t *testing.T) {
	for in, want := range map[string]string{"aws:///us-east-1a/i-0123": "i-0123", "aws:///us-east-1a/x": "", "sim://r/z/i-1": "", "aws:///i-1": ""} {
		got, err := ParseProviderID(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("ParseProviderID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
