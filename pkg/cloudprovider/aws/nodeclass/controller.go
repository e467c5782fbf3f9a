package nodeclass

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-sh/tenon/internal/recovery"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/events"
)

// ControllerName names the controller (in logs, and as the source of its events).
const ControllerName = "ec2nodeclass"

// TerminationFinalizer holds an EC2NodeClass until its NodeClaims are gone and what tenon
// made for it is deleted.
const TerminationFinalizer = awsv1.Group + "/termination"

// DefaultRequeueInterval is how often a class is resolved again when nothing changed: AWS
// resources change without the API server hearing of it (a subnet tagged, a new AMI release).
const DefaultRequeueInterval = time.Minute

// versionTTL is how long a discovered Kubernetes version is reused.
const versionTTL = 15 * time.Minute

// EC2API is the part of *ec2.Client the controller calls.
type EC2API interface {
	DescribeSubnets(context.Context, *ec2.DescribeSubnetsInput, ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeSecurityGroups(context.Context, *ec2.DescribeSecurityGroupsInput, ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)
	DescribeImages(context.Context, *ec2.DescribeImagesInput, ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
	DescribeCapacityReservations(context.Context, *ec2.DescribeCapacityReservationsInput, ...func(*ec2.Options)) (*ec2.DescribeCapacityReservationsOutput, error)
	DescribePlacementGroups(context.Context, *ec2.DescribePlacementGroupsInput, ...func(*ec2.Options)) (*ec2.DescribePlacementGroupsOutput, error)
}

// SSMAPI is the part of *ssm.Client the controller calls.
type SSMAPI interface {
	GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// IAMAPI is the part of *iam.Client the controller calls.
type IAMAPI interface {
	GetInstanceProfile(context.Context, *iam.GetInstanceProfileInput, ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
	CreateInstanceProfile(context.Context, *iam.CreateInstanceProfileInput, ...func(*iam.Options)) (*iam.CreateInstanceProfileOutput, error)
	AddRoleToInstanceProfile(context.Context, *iam.AddRoleToInstanceProfileInput, ...func(*iam.Options)) (*iam.AddRoleToInstanceProfileOutput, error)
	RemoveRoleFromInstanceProfile(context.Context, *iam.RemoveRoleFromInstanceProfileInput, ...func(*iam.Options)) (*iam.RemoveRoleFromInstanceProfileOutput, error)
	TagInstanceProfile(context.Context, *iam.TagInstanceProfileInput, ...func(*iam.Options)) (*iam.TagInstanceProfileOutput, error)
	DeleteInstanceProfile(context.Context, *iam.DeleteInstanceProfileInput, ...func(*iam.Options)) (*iam.DeleteInstanceProfileOutput, error)
}

// Options configure the controller. EC2, SSM, IAM, ClusterName and Region are required.
type Options struct {
	// Client reads and writes EC2NodeClasses and lists NodeClaims (default: the manager's).
	Client client.Client
	// EC2, SSM and IAM are the SDK clients (or anything with their methods).
	EC2 EC2API
	SSM SSMAPI
	IAM IAMAPI
	// ClusterName is the cluster's name, in instance profile names and tags.
	ClusterName string
	// Region is the AWS region, in instance profile names and tags.
	Region string
	// KubernetesVersion ("1.37") picks the alias AMIs; empty asks the API server's /version
	// through Discovery.
	KubernetesVersion string
	// Discovery tells the API server's version (default: a discovery client on the manager's
	// config).
	Discovery discovery.ServerVersionInterface
	// Log receives what the controller does (default: the manager's logger; discarded
	// without a manager).
	Log logr.Logger
	// Recorder records events on EC2NodeClasses (default: a de-duplicating recorder on the
	// manager's).
	Recorder record.EventRecorder
	// RequeueInterval is how often a class is resolved again (default DefaultRequeueInterval).
	RequeueInterval time.Duration
	// Clock stamps condition transitions (default: the real clock).
	Clock clock.Clock
	// OnDelete, when set, is called when a class is deleted, after its NodeClaims are gone and
	// before the finalizer is removed (the launch templates made for it are deleted there). An
	// error retries the finalization.
	OnDelete func(context.Context, *awsv1.EC2NodeClass) error
	// MaxConcurrentReconciles is how many classes are resolved at once (default 4).
	MaxConcurrentReconciles int
}

// Controller is the EC2NodeClass status controller.
type Controller struct {
	opts Options

	mu        sync.Mutex
	version   string
	versionAt time.Time
}

var _ reconcile.Reconciler = (*Controller)(nil)

// NewController returns a controller; SetupWithManager fills in the defaults it can from the
// manager and checks the required options.
func NewController(opts Options) *Controller {
	if opts.RequeueInterval <= 0 {
		opts.RequeueInterval = DefaultRequeueInterval
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 4
	}
	return &Controller{opts: opts}
}

func (c *Controller) validate() error {
	var missing []string
	for name, unset := range map[string]bool{
		"EC2": c.opts.EC2 == nil, "SSM": c.opts.SSM == nil, "IAM": c.opts.IAM == nil,
		"ClusterName": c.opts.ClusterName == "", "Region": c.opts.Region == "", "Client": c.opts.Client == nil,
		"Recorder": c.opts.Recorder == nil, "KubernetesVersion or Discovery": c.opts.KubernetesVersion == "" && c.opts.Discovery == nil,
	} {
		if unset {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("ec2nodeclass controller: Options.%s required", strings.Join(missing, ", Options."))
	}
	return nil
}

// SetupWithManager adds the controller to mgr: it reconciles EC2NodeClasses, and a class again
// when one of its NodeClaims is deleted.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	if c.opts.Client == nil {
		c.opts.Client = mgr.GetClient()
	}
	if c.opts.Recorder == nil {
		c.opts.Recorder = events.New(mgr.GetEventRecorderFor(ControllerName), events.Options{}) //nolint:staticcheck // as the other controllers record
	}
	if c.opts.Log.GetSink() == nil {
		c.opts.Log = mgr.GetLogger()
	}
	c.opts.Log = c.opts.Log.WithName(ControllerName)
	if c.opts.KubernetesVersion == "" && c.opts.Discovery == nil {
		d, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
		if err != nil {
			return fmt.Errorf("ec2nodeclass controller: a discovery client: %w", err)
		}
		c.opts.Discovery = d
	}
	if err := c.validate(); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&awsv1.EC2NodeClass{}).
		Watches(&apisv1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(claimToClass),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc:  func(event.CreateEvent) bool { return false },
				UpdateFunc:  func(event.UpdateEvent) bool { return false },
				DeleteFunc:  func(event.DeleteEvent) bool { return true },
				GenericFunc: func(event.GenericEvent) bool { return false },
			})).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.MaxConcurrentReconciles}).
		Complete(recovery.Reconciler(ControllerName, mgr.GetClient(), c.opts.Recorder,
			func() client.Object { return &awsv1.EC2NodeClass{} }, c))
}

// claimToClass maps a NodeClaim to the EC2NodeClass it names, if it names one.
func claimToClass(_ context.Context, o client.Object) []reconcile.Request {
	claim, ok := o.(*apisv1.NodeClaim)
	if !ok || !namesClass(claim, "") {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: claim.Spec.NodeClassRef.Name}}}
}

// namesClass reports whether a claim's nodeClassRef names an EC2NodeClass (called name, when
// name is not empty).
func namesClass(claim *apisv1.NodeClaim, name string) bool {
	ref := claim.Spec.NodeClassRef
	return ref != nil && ref.Group == awsv1.Group && ref.Kind == awsv1.EC2NodeClassKind && (name == "" || ref.Name == name)
}

// Reconcile resolves one EC2NodeClass, or finalizes it when it is being deleted.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &awsv1.EC2NodeClass{}
	if err := c.opts.Client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	log := c.opts.Log.WithValues("ec2nodeclass", nc.Name)
	if !nc.DeletionTimestamp.IsZero() {
		return c.finalize(ctx, log, nc)
	}
	if !controllerutil.ContainsFinalizer(nc, TerminationFinalizer) {
		stored := nc.DeepCopy()
		controllerutil.AddFinalizer(nc, TerminationFinalizer)
		if err := c.opts.Client.Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}

	stored := nc.DeepCopy()
	r := &resolution{c: c, nc: nc, now: c.opts.Clock.Now(), requeue: c.opts.RequeueInterval}
	r.subnets(ctx)
	r.securityGroups(ctx)
	r.amis(ctx)
	r.capacityReservations(ctx)
	r.instanceProfile(ctx)
	r.placementGroup(ctx)
	r.validation()
	r.ready()

	if !equality.Semantic.DeepEqual(stored.Status, nc.Status) {
		if err := c.opts.Client.Status().Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	c.recordFailures(stored, nc)
	if len(r.transient) > 0 {
		// Requeued by the controller's rate limiter, with backoff.
		return reconcile.Result{}, fmt.Errorf("resolving EC2NodeClass %s: %w", nc.Name, errors.Join(r.transient...))
	}
	return reconcile.Result{RequeueAfter: r.requeue}, nil
}

// recordFailures records a Warning event for each part whose condition became False, or
// whose reason for being False changed, in this reconcile.
func (c *Controller) recordFailures(before, after *awsv1.EC2NodeClass) {
	for _, t := range awsv1.ReadyDependents {
		now := apimeta.FindStatusCondition(after.Status.Conditions, t)
		if now == nil || now.Status != metav1.ConditionFalse || now.Reason == reasonDependenciesNotReady {
			continue
		}
		was := apimeta.FindStatusCondition(before.Status.Conditions, t)
		if was != nil && was.Status == metav1.ConditionFalse && was.Reason == now.Reason && was.Message == now.Message {
			continue
		}
		c.opts.Recorder.Event(after, corev1.EventTypeWarning, now.Reason, now.Message)
	}
}

// kubernetesVersion is the cluster's minor version ("1.37"): Options.KubernetesVersion, or the
// API server's, asked at most every versionTTL.
func (c *Controller) kubernetesVersion() (string, error) {
	if c.opts.KubernetesVersion != "" {
		return c.opts.KubernetesVersion, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Clock.Now()
	if c.version != "" && now.Sub(c.versionAt) < versionTTL {
		return c.version, nil
	}
	info, err := c.opts.Discovery.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("asking the API server for its version: %w", err)
	}
	minor := strings.TrimRight(info.Minor, "+")
	if info.Major == "" || minor == "" {
		return "", fmt.Errorf("the API server's version %q has no major and minor", info.GitVersion)
	}
	c.version, c.versionAt = info.Major+"."+minor, now
	return c.version, nil
}
