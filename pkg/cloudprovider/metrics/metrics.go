// Package metrics measures a cloud provider: Decorate wraps any cloudprovider.CloudProvider so
// that every call is timed in karpenter_cloudprovider_duration_seconds and every error counted in
// karpenter_cloudprovider_errors_total, with Karpenter's labels (controller, method, provider,
// and error for the errors). The operator decorates the provider it builds once; decorating
// twice would count every call twice.
package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// Values of the error label: the provider's typed errors, by name, and "" for any other.
const (
	ErrorNodeClaimNotFound    = "NodeClaimNotFoundError"
	ErrorNodeClassNotReady    = "NodeClassNotReadyError"
	ErrorInsufficientCapacity = "InsufficientCapacityError"
	ErrorOther                = ""
)

var (
	// Duration has no buckets of its own, as in Karpenter: Prometheus's defaults (5 ms to 10 s).
	Duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "karpenter_cloudprovider_duration_seconds",
		Help: "Time of cloud provider calls, by calling controller, method and provider.",
	}, []string{"controller", "method", "provider"})
	Errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpenter_cloudprovider_errors_total",
		Help: "Errors cloud provider calls returned, by calling controller, method, provider and error type (NodeClaimNotFoundError, NodeClassNotReadyError, InsufficientCapacityError, or empty).",
	}, []string{"controller", "method", "provider", "error"})
)

func init() { metrics.MustRegister(Duration, Errors) }

// ErrorType is the error label value of err.
func ErrorType(err error) string {
	switch {
	case cloudprovider.IsInsufficientCapacity(err):
		return ErrorInsufficientCapacity
	case cloudprovider.IsNodeClaimNotFound(err):
		return ErrorNodeClaimNotFound
	case cloudprovider.IsNodeClassNotReady(err):
		return ErrorNodeClassNotReady
	}
	return ErrorOther
}

// Decorate returns cp measured. The result also implements cloudprovider.InterruptionQueue
// when cp does, so that wrapping hides nothing, and always cloudprovider.HashStamper: it
// stamps through cp when cp is one, and changes nothing otherwise.
func Decorate(cp cloudprovider.CloudProvider) cloudprovider.CloudProvider {
	d := &decorator{cp: cp}
	if q, ok := cp.(cloudprovider.InterruptionQueue); ok {
		return &queueDecorator{decorator: d, q: q}
	}
	return d
}

// Undecorated returns the provider Decorate wrapped (cp itself when it is not decorated).
func Undecorated(cp cloudprovider.CloudProvider) cloudprovider.CloudProvider {
	switch d := cp.(type) {
	case *decorator:
		return d.cp
	case *queueDecorator:
		return d.cp
	}
	return cp
}

type decorator struct{ cp cloudprovider.CloudProvider }

var (
	_ cloudprovider.CloudProvider = (*decorator)(nil)
	_ cloudprovider.HashStamper   = (*decorator)(nil)
)

// measure times a call of method and counts its error.
func (d *decorator) measure(ctx context.Context, method string, start time.Time, err error) {
	ctrl, name := metrics.Controller(ctx), d.cp.Name()
	Duration.WithLabelValues(ctrl, method, name).Observe(time.Since(start).Seconds())
	if err != nil {
		Errors.WithLabelValues(ctrl, method, name, ErrorType(err)).Inc()
	}
}

func (d *decorator) Create(ctx context.Context, claim *apisv1.NodeClaim) (*apisv1.NodeClaim, error) {
	start := time.Now()
	out, err := d.cp.Create(ctx, claim)
	d.measure(ctx, "Create", start, err)
	return out, err
}

func (d *decorator) Delete(ctx context.Context, claim *apisv1.NodeClaim) error {
	start := time.Now()
	err := d.cp.Delete(ctx, claim)
	d.measure(ctx, "Delete", start, err)
	return err
}

func (d *decorator) Get(ctx context.Context, providerID string) (*apisv1.NodeClaim, error) {
	start := time.Now()
	out, err := d.cp.Get(ctx, providerID)
	d.measure(ctx, "Get", start, err)
	return out, err
}

func (d *decorator) List(ctx context.Context) ([]*apisv1.NodeClaim, error) {
	start := time.Now()
	out, err := d.cp.List(ctx)
	d.measure(ctx, "List", start, err)
	return out, err
}

func (d *decorator) GetInstanceTypes(ctx context.Context, nodePool *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	start := time.Now()
	out, err := d.cp.GetInstanceTypes(ctx, nodePool)
	d.measure(ctx, "GetInstanceTypes", start, err)
	return out, err
}

func (d *decorator) IsDrifted(ctx context.Context, claim *apisv1.NodeClaim) (cloudprovider.DriftReason, error) {
	start := time.Now()
	out, err := d.cp.IsDrifted(ctx, claim)
	d.measure(ctx, "IsDrifted", start, err)
	return out, err
}

// StampHash forwards to cp when it is a cloudprovider.HashStamper. It calls no cloud API (it
// reads the NodeClass from the cluster), so it is not measured.
func (d *decorator) StampHash(ctx context.Context, claim *apisv1.NodeClaim) (from, to string, err error) {
	if s, ok := d.cp.(cloudprovider.HashStamper); ok {
		return s.StampHash(ctx, claim)
	}
	return "", "", nil
}

func (d *decorator) Name() string                    { return d.cp.Name() }
func (d *decorator) NodeClasses() []schema.GroupKind { return d.cp.NodeClasses() }

type queueDecorator struct {
	*decorator
	q cloudprovider.InterruptionQueue
}

var _ cloudprovider.InterruptionQueue = (*queueDecorator)(nil)

// Receive and Done are passed through unmeasured: a receive waits for messages (long
// polling), so its time says nothing of the provider, and the interruption controller counts
// both in its own metrics.
func (d *queueDecorator) Receive(ctx context.Context) ([]cloudprovider.InterruptionMessage, error) {
	return d.q.Receive(ctx)
}

func (d *queueDecorator) Done(ctx context.Context, id string) error { return d.q.Done(ctx, id) }
