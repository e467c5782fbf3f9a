package awsapi

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

// param reads an SSM parameter.
func (e *env) param(t *testing.T, name string) string {
	t.Helper()
	out, err := e.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return aws.ToString(out.Parameter.Value)
}

func TestSSMAliasParametersNameAMIsThatDescribeImagesServes(t *testing.T) {
	e := newEnv(t, Options{})
	cases := map[string]string{
		"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id":                                           "x86_64",
		"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/standard/recommended/image_id":                                            "arm64",
		"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/nvidia/recommended/image_id":                                             "x86_64",
		"/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/neuron/recommended/image_id":                                             "x86_64",
		"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v20261101/image_id": "x86_64",
		"/aws/service/bottlerocket/aws-k8s-1.37/arm64/latest/image_id":                                                                         "arm64",
		"/aws/service/bottlerocket/aws-k8s-1.37-nvidia/x86_64/latest/image_id":                                                                 "x86_64",
		"/aws/service/bottlerocket/aws-k8s-1.37/x86_64/1.49.0/image_id":                                                                        "x86_64",
	}
	ids := map[string]bool{}
	for name, arch := range cases {
		id := e.param(t, name)
		ids[id] = true
		out, err := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}})
		if err != nil || len(out.Images) != 1 {
			t.Fatalf("%s → %s: %d images (%v)", name, id, len(out.Images), err)
		}
		if img := out.Images[0]; string(img.Architecture) != arch || img.State != "available" || aws.ToString(img.CreationDate) == "" {
			t.Errorf("%s: %s %s", name, img.Architecture, img.State)
		}
	}
	if len(ids) != len(cases) {
		t.Errorf("%d distinct AMIs for %d parameters", len(ids), len(cases))
	}
	older := e.param(t, "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v20261101/image_id")
	if latest := e.param(t, "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"); latest == older {
		t.Error("recommended names the older release")
	}

	_, err := e.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.10/amazon-linux-2023/x86_64/standard/recommended/image_id")})
	var nf *ssmtypes.ParameterNotFound
	if !errors.As(err, &nf) {
		t.Fatalf("missing parameter: %v", err)
	}
	many, err := e.ssm.GetParameters(ctx, &ssm.GetParametersInput{Names: []string{"/aws/service/bottlerocket/aws-k8s-1.36/x86_64/latest/image_id", "/nope"}})
	if err != nil || len(many.Parameters) != 1 || len(many.InvalidParameters) != 1 || many.InvalidParameters[0] != "/nope" {
		t.Fatalf("GetParameters: %+v (%v)", many, err)
	}

	// A new release moves the recommended parameter: what AMI drift follows.
	before := e.param(t, "/aws/service/bottlerocket/aws-k8s-1.37/x86_64/latest/image_id")
	e.s.PublishRelease("v20261201", "1.51.0")
	after := e.param(t, "/aws/service/bottlerocket/aws-k8s-1.37/x86_64/latest/image_id")
	if before == after || e.param(t, "/aws/service/bottlerocket/aws-k8s-1.37/x86_64/1.50.0/image_id") != before {
		t.Errorf("latest %s → %s after a release", before, after)
	}

	byName, err := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-arm64-standard-1.37-*"}}}})
	if err != nil || len(byName.Images) != 3 {
		t.Fatalf("by name pattern: %d images (%v)", len(byName.Images), err)
	}
}

func TestPricingGetProductsCarriesTheCatalogsOnDemandPrices(t *testing.T) {
	e := newEnv(t, Options{})
	term := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Field: aws.String(field), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String(value)}
	}
	p := pricing.NewGetProductsPaginator(e.pricing, &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"),
		Filters: []pricingtypes.Filter{
			term("tenancy", "Shared"), term("productFamily", "Compute Instance"), term("regionCode", "us-east-1"), term("serviceCode", "AmazonEC2"),
			term("preInstalledSw", "NA"), term("operatingSystem", "Linux"), term("capacitystatus", "Used"), term("marketoption", "OnDemand"),
		},
	})
	prices := map[string]float64{}
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range out.PriceList {
			var item struct {
				Product struct {
					Attributes struct {
						InstanceType string `json:"instanceType"`
					} `json:"attributes"`
				} `json:"product"`
				Terms struct {
					OnDemand map[string]struct {
						PriceDimensions map[string]struct {
							PricePerUnit struct {
								USD string `json:"USD"`
							} `json:"pricePerUnit"`
						} `json:"priceDimensions"`
					} `json:"OnDemand"`
				} `json:"terms"`
			}
			if err := json.Unmarshal([]byte(doc), &item); err != nil {
				t.Fatal(err)
			}
			for _, term := range item.Terms.OnDemand {
				for _, dim := range term.PriceDimensions {
					v, err := strconv.ParseFloat(dim.PricePerUnit.USD, 64)
					if err != nil {
						t.Fatal(err)
					}
					prices[item.Product.Attributes.InstanceType] = v
				}
			}
		}
	}
	it, _ := e.s.opts.Catalog.Get("m5.large")
	want, _ := it.OnDemandPrice()
	if prices["m5.large"] != want || want == 0 {
		t.Fatalf("m5.large: %v, want %v", prices["m5.large"], want)
	}
	shared := 0
	for _, it := range e.s.opts.Catalog.Types {
		if _, priced := it.OnDemandPrice(); priced && !it.Shape.BareMetal {
			shared++
		}
	}
	if len(prices) != shared {
		t.Errorf("%d shared-tenancy prices for %d priced non-metal types", len(prices), shared)
	}
}

func TestIAMInstanceProfilesLiveAsIAMsDo(t *testing.T) {
	e := newEnv(t, Options{})
	name := aws.String("tenon_123_profile")
	_, err := e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: name})
	var nse *iamtypes.NoSuchEntityException
	if !errors.As(err, &nse) {
		t.Fatalf("missing profile: %v", err)
	}
	created, err := e.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: name, Path: aws.String("/karpenter/"), Tags: []iamtypes.Tag{{Key: aws.String("karpenter.k8s.aws/ec2nodeclass"), Value: aws.String("default")}}})
	if err != nil {
		t.Fatal(err)
	}
	if arn := aws.ToString(created.InstanceProfile.Arn); arn != "arn:aws:iam::"+DefaultAccount+":instance-profile/karpenter/tenon_123_profile" {
		t.Errorf("ARN %s", arn)
	}
	_, err = e.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: name})
	var exists *iamtypes.EntityAlreadyExistsException
	if !errors.As(err, &exists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := e.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("KarpenterNodeRole")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("Other")})
	wantCode(t, err, "LimitExceeded")
	if _, err := e.iam.TagInstanceProfile(ctx, &iam.TagInstanceProfileInput{InstanceProfileName: name, Tags: []iamtypes.Tag{{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("tenon")}}}); err != nil {
		t.Fatal(err)
	}
	got, err := e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: name})
	if err != nil || len(got.InstanceProfile.Roles) != 1 || aws.ToString(got.InstanceProfile.Roles[0].RoleName) != "KarpenterNodeRole" || len(got.InstanceProfile.Tags) != 2 {
		t.Fatalf("profile: %+v (%v)", got.InstanceProfile, err)
	}
	_, err = e.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: name})
	var dc *iamtypes.DeleteConflictException
	if !errors.As(err, &dc) {
		t.Fatalf("delete with a role: %v", err)
	}
	if _, err := e.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("KarpenterNodeRole")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: name}); err != nil {
		t.Fatal(err)
	}
	_, err = e.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: name})
	wantCode(t, err, "NoSuchEntity")
}

func TestSQSQueuesDeliverAtLeastOnceWithVisibilityTimeouts(t *testing.T) {
	e := newEnv(t, Options{})
	_, err := e.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("tenon")})
	var missing *sqstypes.QueueDoesNotExist
	if !errors.As(err, &missing) {
		t.Fatalf("missing queue: %v", err)
	}
	created, err := e.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("tenon"), Attributes: map[string]string{"VisibilityTimeout": "60"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("tenon")})
	if err != nil || aws.ToString(got.QueueUrl) != aws.ToString(created.QueueUrl) {
		t.Fatalf("queue URL %s vs %s (%v)", aws.ToString(got.QueueUrl), aws.ToString(created.QueueUrl), err)
	}
	url := created.QueueUrl
	// The SDK checks the MD5 of the body the endpoint reports.
	if _, err := e.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String(`{"hello":"world"}`)}); err != nil {
		t.Fatal(err)
	}
	recv := func(wait int32) []sqstypes.Message {
		t.Helper()
		out, err := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: wait, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Messages
	}
	msgs := recv(0)
	if len(msgs) != 1 || aws.ToString(msgs[0].Body) != `{"hello":"world"}` || msgs[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("received %+v", msgs)
	}
	if again := recv(0); len(again) != 0 {
		t.Fatalf("an in-flight message was delivered again: %+v", again)
	}
	e.advance(61 * time.Second)
	msgs = recv(0)
	if len(msgs) != 1 || msgs[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("after the visibility timeout: %+v", msgs)
	}
	if _, err := e.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: url, ReceiptHandle: msgs[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	msgs = recv(0)
	if len(msgs) != 1 {
		t.Fatalf("after making it visible: %d", len(msgs))
	}
	if _, err := e.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: msgs[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	e.advance(time.Hour)
	if left := recv(0); len(left) != 0 {
		t.Fatalf("a deleted message came back: %+v", left)
	}
	_, err = e.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: aws.String("not a handle")})
	wantCode(t, err, "ReceiptHandleIsInvalid")

	// A long poll returns as soon as a message arrives.
	done := make(chan []sqstypes.Message)
	go func() {
		out, _ := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 20})
		done <- out.Messages
	}()
	time.Sleep(100 * time.Millisecond)
	if _, err := e.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("late")}); err != nil {
		t.Fatal(err)
	}
	if msgs := <-done; len(msgs) != 1 || aws.ToString(msgs[0].Body) != "late" {
		t.Fatalf("long poll: %+v", msgs)
	}
	// An empty long poll is bounded by MaxWait (2s by default), not the 20s asked for.
	start := time.Now()
	if msgs := recv(20); len(msgs) != 0 {
		t.Fatalf("empty queue gave %+v", msgs)
	}
	if waited := time.Since(start); waited < time.Second || waited > 10*time.Second {
		t.Errorf("empty long poll took %v", waited)
	}
}
