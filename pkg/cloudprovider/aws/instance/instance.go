package instance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// Tag keys tenon writes on what it launches (the same as Karpenter's AWS provider).
const (
	TagNodePool        = apisv1.NodePoolLabelKey // karpenter.sh/nodepool
	TagNodeClaim       = "karpenter.sh/nodeclaim"
	TagEC2NodeClass    = "karpenter.k8s.aws/ec2nodeclass"
	TagEKSClusterName  = "eks:eks-cluster-name"
	TagClusterPrefix   = "kubernetes.io/cluster/"
	TagName            = "Name"
	TagValueOwned      = "owned"
	stateFilterName    = "instance-state-name"
	notFoundInstanceID = "InvalidInstanceID.NotFound"
)

// EC2API is the part of *ec2.Client the instance provider calls.
type EC2API interface {
	CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error)
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	TerminateInstances(ctx context.Context, in *ec2.TerminateInstancesInput, opts ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error)
}

// Options configure New.
type Options struct {
	EC2 EC2API
	// ClusterName is the cluster the instances are tagged for (eks:eks-cluster-name). Required.
	ClusterName string
	// BatchIdle and BatchMax bound how long Get, FindByClaim and Delete wait for other calls to
	// join theirs (default 100ms and 1s, as Karpenter's AWS provider batches); BatchMaxItems
	// caps a batch (default 500).
	BatchIdle, BatchMax time.Duration
	BatchMaxItems       int
	// SubnetCooldown is how long a subnet that ran out of addresses is skipped (default 3m).
	SubnetCooldown time.Duration
}

// Provider launches, finds and terminates EC2 instances. It is safe for concurrent use.
type Provider struct {
	ec2     EC2API
	cluster string
	cool    time.Duration

	describe  *batcher[string, *Instance]
	byClaim   *batcher[string, *Instance]
	terminate *batcher[string, struct{}]

	mu          sync.Mutex
	fullSubnets map[string]time.Time
}

// Instance is an EC2 instance as tenon sees it.
type Instance struct {
	ID            string
	Type          string
	Zone          string
	CapacityType  string
	ReservationID string
	ImageID       string
	SubnetID      string
	// SecurityGroups are the instance's security group IDs, sorted.
	SecurityGroups []string
	State          ec2types.InstanceStateName
	Launched       time.Time
	Tags           map[string]string
}

// ProviderID is the Kubernetes provider ID: aws:///<zone>/<instance-id>.
func (i *Instance) ProviderID() string { return "aws:///" + i.Zone + "/" + i.ID }

// ParseProviderID returns the instance ID of an aws:///<zone>/<id> provider ID.
func ParseProviderID(providerID string) (string, error) {
	rest, ok := strings.CutPrefix(providerID, "aws:///")
	if !ok {
		return "", fmt.Errorf("provider ID %q is not aws:///<zone>/<instance-id>", providerID)
	}
	_, id, ok := strings.Cut(rest, "/")
	if !ok || !strings.HasPrefix(id, "i-") || strings.Contains(id, "/") {
		return "", fmt.Errorf("provider ID %q is not aws:///<zone>/<instance-id>", providerID)
	}
	return id, nil
}

// New returns a provider.
func New(opts Options) (*Provider, error) {
	if opts.EC2 == nil || opts.ClusterName == "" {
		return nil, errors.New("instance: Options.EC2 and Options.ClusterName are required")
	}
	if opts.BatchIdle <= 0 {
		opts.BatchIdle = 100 * time.Millisecond
	}
	if opts.BatchMax <= 0 {
		opts.BatchMax = time.Second
	}
	if opts.BatchMaxItems <= 0 {
		opts.BatchMaxItems = 500
	}
	if opts.SubnetCooldown <= 0 {
		opts.SubnetCooldown = 3 * time.Minute
	}
	p := &Provider{ec2: opts.EC2, cluster: opts.ClusterName, cool: opts.SubnetCooldown, fullSubnets: map[string]time.Time{}}
	notFound := func(id string) error {
		return cloudprovider.NewNodeClaimNotFoundError("aws:///"+id, errors.New("no such instance"))
	}
	p.describe = newBatcher(opts.BatchIdle, opts.BatchMax, opts.BatchMaxItems, p.describeBatch, notFound)
	p.byClaim = newBatcher(opts.BatchIdle, opts.BatchMax, opts.BatchMaxItems, p.byClaimBatch, func(string) error { return errNoInstance })
	p.terminate = newBatcher(opts.BatchIdle, opts.BatchMax, opts.BatchMaxItems, p.terminateBatch, notFound)
	return p, nil
}

// errNoInstance is FindByClaim's "none".
var errNoInstance = errors.New("no instance")

// liveStates are the states Get, FindByClaim and List see; terminated instances are gone.
var liveStates = []string{"pending", "running", "shutting-down", "stopping", "stopped"}

func (p *Provider) clusterFilter() ec2types.Filter {
	return ec2types.Filter{Name: aws.String("tag:" + TagEKSClusterName), Values: []string{p.cluster}}
}

// Get returns the instance with this ID unless it has terminated (then a
// *cloudprovider.NodeClaimNotFoundError). Calls made together share one DescribeInstances.
func (p *Provider) Get(ctx context.Context, id string) (*Instance, error) {
	return p.describe.Do(ctx, id)
}

func (p *Provider) describeBatch(ctx context.Context, ids []string) (map[string]*Instance, error) {
	// Filtering by instance-id instead of naming InstanceIds: a missing ID then just goes
	// unreported instead of failing the whole batch.
	return p.describeAll(ctx, []ec2types.Filter{
		{Name: aws.String("instance-id"), Values: ids},
		{Name: aws.String(stateFilterName), Values: liveStates},
	}, func(i *Instance) string { return i.ID })
}

// FindByClaim returns the pending or running instance launched for the NodeClaim called name
// (by its karpenter.sh/nodeclaim tag, in this cluster), or nil when there is none. When there
// are several (which Create's check exists to prevent), the oldest. Calls made together share
// one DescribeInstances.
func (p *Provider) FindByClaim(ctx context.Context, name string) (*Instance, error) {
	inst, err := p.byClaim.Do(ctx, name)
	if errors.Is(err, errNoInstance) {
		return nil, nil
	}
	return inst, err
}

func (p *Provider) byClaimBatch(ctx context.Context, names []string) (map[string]*Instance, error) {
	found, err := p.list(ctx, []ec2types.Filter{
		p.clusterFilter(),
		{Name: aws.String("tag:" + TagNodeClaim), Values: names},
		{Name: aws.String(stateFilterName), Values: []string{"pending", "running"}},
	})
	if err != nil {
		return nil, err
	}
	out := map[string]*Instance{}
	for _, inst := range found {
		name := inst.Tags[TagNodeClaim]
		if prev, ok := out[name]; !ok || inst.Launched.Before(prev.Launched) {
			out[name] = inst
		}
	}
	return out, nil
}

// List returns every instance tagged for this cluster by tenon (or Karpenter: the tags are
// the same; ownership is decided from the NodeClaims' nodeClassRefs, see
// cloudprovider.IsManaged) that has not terminated, paginated.
func (p *Provider) List(ctx context.Context) ([]*Instance, error) {
	return p.list(ctx, []ec2types.Filter{
		p.clusterFilter(),
		{Name: aws.String("tag-key"), Values: []string{TagNodePool}},
		{Name: aws.String("tag-key"), Values: []string{TagEC2NodeClass}},
		{Name: aws.String(stateFilterName), Values: liveStates},
	})
}

func (p *Provider) describeAll(ctx context.Context, filters []ec2types.Filter, key func(*Instance) string) (map[string]*Instance, error) {
	found, err := p.list(ctx, filters)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Instance, len(found))
	for _, inst := range found {
		out[key(inst)] = inst
	}
	return out, nil
}

func (p *Provider) list(ctx context.Context, filters []ec2types.Filter) ([]*Instance, error) {
	pages := ec2.NewDescribeInstancesPaginator(p.ec2, &ec2.DescribeInstancesInput{Filters: filters, MaxResults: aws.Int32(1000)})
	var out []*Instance
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instances: %w", err)
		}
		for _, r := range page.Reservations {
			for i := range r.Instances {
				out = append(out, fromEC2(&r.Instances[i]))
			}
		}
	}
	slices.SortFunc(out, func(a, b *Instance) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func fromEC2(in *ec2types.Instance) *Instance {
	inst := &Instance{
		ID: aws.ToString(in.InstanceId), Type: string(in.InstanceType), ImageID: aws.ToString(in.ImageId),
		SubnetID: aws.ToString(in.SubnetId), Launched: aws.ToTime(in.LaunchTime), Tags: map[string]string{},
		CapacityType: apisv1.CapacityTypeOnDemand,
	}
	if in.Placement != nil {
		inst.Zone = aws.ToString(in.Placement.AvailabilityZone)
	}
	if in.State != nil {
		inst.State = in.State.Name
	}
	for _, g := range in.SecurityGroups {
		inst.SecurityGroups = append(inst.SecurityGroups, aws.ToString(g.GroupId))
	}
	slices.Sort(inst.SecurityGroups)
	for _, t := range in.Tags {
		inst.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	switch {
	case in.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot || in.SpotInstanceRequestId != nil:
		inst.CapacityType = apisv1.CapacityTypeSpot
	case in.CapacityReservationId != nil && aws.ToString(in.CapacityReservationId) != "":
		inst.CapacityType = apisv1.CapacityTypeReserved
		inst.ReservationID = aws.ToString(in.CapacityReservationId)
	}
	return inst
}

// Delete begins terminating the instance. It returns nil when the instance is shutting down
// (or was already), and a *cloudprovider.NodeClaimNotFoundError once it has terminated or
// never existed. Calls made together share one TerminateInstances.
func (p *Provider) Delete(ctx context.Context, id string) error {
	inst, err := p.Get(ctx, id)
	if err != nil {
		return err
	}
	if inst.State == ec2types.InstanceStateNameShuttingDown {
		return nil
	}
	_, err = p.terminate.Do(ctx, id)
	return err
}

func (p *Provider) terminateBatch(ctx context.Context, ids []string) (map[string]struct{}, error) {
	out := map[string]struct{}{}
	if _, err := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids}); err == nil {
		for _, id := range ids {
			out[id] = struct{}{}
		}
		return out, nil
	} else if !isNotFound(err) {
		return nil, fmt.Errorf("terminating instances: %w", err)
	}
	// One of them is gone, which fails the whole call: terminate them one by one.
	var errs []error
	for _, id := range ids {
		_, err := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
		switch {
		case err == nil:
			out[id] = struct{}{}
		case isNotFound(err):
		default:
			errs = append(errs, fmt.Errorf("terminating %s: %w", id, err))
		}
	}
	return out, errors.Join(errs...)
}

func isNotFound(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == notFoundInstanceID
}

// Launch makes one CreateFleet call (type instant) for req and returns the instance it
// launched. When no override launched and every error says no capacity, the error is a
// *cloudprovider.InsufficientCapacityError naming exactly the offerings the fleet reported;
// any other fleet error (a bad request) is returned as itself. Throttling and server errors
// come back from the SDK after its retries, never as insufficient capacity. insufficient,
// when not nil, hears the offerings that had no capacity even when the launch succeeded
// elsewhere. Subnets that ran out of addresses are skipped by later Overrides calls through
// SubnetFull for Options.SubnetCooldown.
func (p *Provider) Launch(ctx context.Context, req LaunchRequest, insufficient func([]cloudprovider.Offering)) (*Instance, error) {
	n := 0
	for _, c := range req.Configs {
		n += len(c.Overrides)
	}
	if n == 0 {
		return nil, errors.New("launching: no overrides to try")
	}
	out, err := p.ec2.CreateFleet(ctx, FleetInput(req))
	if err != nil {
		return nil, fmt.Errorf("creating fleet: %w", err)
	}
	fe := ClassifyFleetErrors(out.Errors, req.CapacityType)
	p.markSubnets(fe.Subnets)
	if insufficient != nil && len(fe.Offerings) > 0 {
		insufficient(fe.Offerings)
	}
	for _, fi := range out.Instances {
		if len(fi.InstanceIds) == 0 {
			continue
		}
		inst := &Instance{
			ID: fi.InstanceIds[0], Type: string(fi.InstanceType), CapacityType: req.CapacityType,
			State: ec2types.InstanceStateNamePending, Launched: time.Now(), Tags: req.Tags,
		}
		if lo := fi.LaunchTemplateAndOverrides; lo != nil && lo.Overrides != nil {
			inst.Zone, inst.SubnetID, inst.ImageID = aws.ToString(lo.Overrides.AvailabilityZone), aws.ToString(lo.Overrides.SubnetId), aws.ToString(lo.Overrides.ImageId)
			template := ""
			if lo.LaunchTemplateSpecification != nil {
				template = aws.ToString(lo.LaunchTemplateSpecification.LaunchTemplateName)
			}
			inst.ReservationID = reservationOf(req, template, string(fi.InstanceType), inst.Zone)
		}
		return inst, nil
	}
	if len(fe.Other) == 0 && len(fe.Offerings) > 0 {
		return nil, &cloudprovider.InsufficientCapacityError{Offerings: fe.Offerings}
	}
	if len(fe.Other) == 0 {
		return nil, errors.New("creating fleet: no instance launched and no error reported")
	}
	return nil, fmt.Errorf("creating fleet: %w", errors.Join(fe.Other...))
}

// reservationOf finds the reservation of the override that launched.
func reservationOf(req LaunchRequest, template, instanceType, zone string) string {
	for _, c := range req.Configs {
		if template != "" && c.TemplateName != template {
			continue
		}
		for _, o := range c.Overrides {
			if o.InstanceType == instanceType && o.Zone == zone && o.ReservationID != "" {
				return o.ReservationID
			}
		}
	}
	return ""
}

func (p *Provider) markSubnets(ids []string) {
	if len(ids) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	until := time.Now().Add(p.cool)
	for _, id := range ids {
		p.fullSubnets[id] = until
	}
}

// SubnetFull reports whether the subnet recently ran out of addresses; pass it to Overrides.
func (p *Provider) SubnetFull(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.fullSubnets[id]
	if ok && !time.Now().Before(until) {
		delete(p.fullSubnets, id)
		return false
	}
	return ok
}
