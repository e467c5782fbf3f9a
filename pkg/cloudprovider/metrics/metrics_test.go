package metrics

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/metrics"
)

// provider answers every call with err; the decorator, not the provider, is under test.
type provider struct {
	err   error
	calls int
}

func (p *provider) Create(context.Context, *apisv1.NodeClaim) (*apisv1.NodeClaim, error) {
	p.calls++
	return &apisv1.NodeClaim{}, p.err
}
func (p *provider) Delete(context.Context, *apisv1.NodeClaim) error { p.calls++; return p.err }
func (p *provider) Get(context.Context, string) (*apisv1.NodeClaim, error) {
	p.calls++
	return nil, p.err
}
func (p *provider) List(context.Context) ([]*apisv1.NodeClaim, error) { p.calls++; return nil, p.err }
func (p *provider) GetInstanceTypes(context.Context, *apisv1.NodePool) ([]*catalog.InstanceType, error) {
	p.calls++
	return nil, p.err
}
func (p *provider) IsDrifted(context.Context, *apisv1.NodeClaim) (cloudprovider.DriftReason, error) {
	p.calls++
	return "", p.err
}
func (p *provider) Name() string { return "decorator-test" }
func (p *provider) NodeClasses() []schema.GroupKind {
	return []schema.GroupKind{{Group: "g", Kind: "K"}}
}

type queue struct{ provider }

func (q *queue) Receive(context.Context) ([]cloudprovider.InterruptionMessage, error) {
	return nil, nil
}
func (q *queue) Done(context.Context, string) error { return nil }

func TestDecoratorTimesEveryMethodByController(t *testing.T) {
	p := &provider{}
	cp := Decorate(p)
	ctx := metrics.WithController(context.Background(), "lifecycle-test")
	_, _ = cp.Create(ctx, &apisv1.NodeClaim{})
	_ = cp.Delete(ctx, &apisv1.NodeClaim{})
	_, _ = cp.Get(ctx, "id")
	_, _ = cp.List(ctx)
	_, _ = cp.GetInstanceTypes(ctx, &apisv1.NodePool{})
	_, _ = cp.IsDrifted(ctx, &apisv1.NodeClaim{})
	if p.calls != 6 {
		t.Fatalf("the provider saw %d calls, want 6", p.calls)
	}
	for _, m := range []string{"Create", "Delete", "Get", "List", "GetInstanceTypes", "IsDrifted"} {
		if got := sampleCount(t, "lifecycle-test", m); got != 1 {
			t.Errorf("karpenter_cloudprovider_duration_seconds{method=%s} count = %d, want 1", m, got)
		}
	}
	if cp.Name() != "decorator-test" || len(cp.NodeClasses()) != 1 || Undecorated(cp) != p {
		t.Error("the decorator does not pass Name, NodeClasses through, or Undecorated does not unwrap it")
	}
}

func TestDecoratorCountsErrorsByType(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&cloudprovider.InsufficientCapacityError{}, ErrorInsufficientCapacity},
		{cloudprovider.NewNodeClaimNotFoundError("id", errors.New("gone")), ErrorNodeClaimNotFound},
		{&cloudprovider.NodeClassNotReadyError{}, ErrorNodeClassNotReady},
		{errors.New("boom"), ErrorOther},
	} {
		cp := Decorate(&provider{err: tc.err})
		c := Errors.WithLabelValues("errors-test", "Create", "decorator-test", tc.want)
		before := testutil.ToFloat64(c)
		_, _ = cp.Create(metrics.WithController(context.Background(), "errors-test"), &apisv1.NodeClaim{})
		if got := testutil.ToFloat64(c); got != before+1 {
			t.Errorf("%v: karpenter_cloudprovider_errors_total{error=%q} went from %v to %v", tc.err, tc.want, before, got)
		}
	}
	ok := Errors.WithLabelValues("errors-test", "Delete", "decorator-test", ErrorOther)
	_ = Decorate(&provider{}).Delete(metrics.WithController(context.Background(), "errors-test"), &apisv1.NodeClaim{})
	if got := testutil.ToFloat64(ok); got != 0 {
		t.Errorf("a call that succeeded counted an error: %v", got)
	}
}

func TestDecoratorKeepsTheInterruptionQueue(t *testing.T) {
	if _, ok := Decorate(&provider{}).(cloudprovider.InterruptionQueue); ok {
		t.Error("a provider without a queue gained one")
	}
	q := &queue{}
	d, ok := Decorate(q).(cloudprovider.InterruptionQueue)
	if !ok {
		t.Fatal("decorating hid the provider's interruption queue")
	}
	if _, err := d.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	if Undecorated(d.(cloudprovider.CloudProvider)) != q {
		t.Error("Undecorated does not unwrap a queue decorator")
	}
}

func sampleCount(t *testing.T, ctrl, method string) uint64 {
	t.Helper()
	mfs, err := gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "karpenter_cloudprovider_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["controller"] == ctrl && l["method"] == method {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

func gatherer() interface {
	Gather() ([]*dto.MetricFamily, error)
} {
	return crmetrics.Registry
}
