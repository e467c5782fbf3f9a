package operator_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	"github.com/tenon-sh/tenon/pkg/operator"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// get fetches a URL until the server answers (it starts with the manager).
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The operator applies --kube-client-qps/--kube-client-burst to its API client and, with
// --enable-profiling, serves pprof on the metrics address, as Karpenter does; without it,
// /debug/pprof/ is not there. Its /metrics serves Karpenter's and tenon's metrics.
func TestOperatorClientLimitsProfilingAndMetricsEndpoint(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{CRDs: all})
	for _, profiling := range []bool{true, false} {
		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		op, err := operator.New(ctx, cp.RESTConfig(), operator.Options{
			MetricsAddr: addr, HealthAddr: "0", AllowRepeatedControllers: true,
			KubeClientQPS: 33, KubeClientBurst: 66, EnableProfiling: profiling,
		}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		if c := op.Manager.GetConfig(); c.QPS != 33 || c.Burst != 66 {
			t.Errorf("the manager's client has QPS %v and burst %d, want 33 and 66", c.QPS, c.Burst)
		}
		done := make(chan error, 1)
		go func() { done <- op.Start(ctx) }()

		code, body := get(t, "http://"+addr+"/debug/pprof/")
		switch {
		case profiling && (code != http.StatusOK || !strings.Contains(body, "goroutine")):
			t.Errorf("with profiling, /debug/pprof/ answered %d: %.200s", code, body)
		case !profiling && code != http.StatusNotFound:
			t.Errorf("without profiling, /debug/pprof/ answered %d, want 404", code)
		}
		if profiling {
			if code, _ := get(t, "http://"+addr+"/debug/pprof/heap"); code != http.StatusOK {
				t.Errorf("/debug/pprof/heap answered %d", code)
			}
		}
		code, body = get(t, "http://"+addr+"/metrics")
		if code != http.StatusOK {
			t.Fatalf("/metrics answered %d", code)
		}
		for _, want := range []string{"karpenter_build_info{", "karpenter_cluster_state_synced", "controller_runtime_"} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator: %v", err)
		}
	}
}

// tenon refuses to start while Karpenter's leader-election Lease (in the namespace and under
// the name it is told) is held and fresh, naming the Lease, its holder and its renewal; it
// starts with --takeover, and without it once the Lease has lapsed or been released.
func TestOperatorRefusesToStartNextToALiveKarpenter(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{CRDs: all})
	kube, err := client.New(cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karpenter"}}); err != nil {
		t.Fatal(err)
	}
	holder := "karpenter-7c9d6b5f8-q4zr2_9e1b7d3a-5c2f-4e8a-b6d1-0f3a2c4e6b8d"
	renewed := time.Now().Add(-2 * time.Second).Truncate(time.Second)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karpenter", Name: operator.DefaultKarpenterLeaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: ptr.To(metav1.NewMicroTime(renewed)), RenewTime: ptr.To(metav1.NewMicroTime(renewed))},
	}
	if err := kube.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	inKarpenterNS := operator.Coexistence{KarpenterLease: types.NamespacedName{Namespace: "karpenter", Name: operator.DefaultKarpenterLeaseName}}
	newOp := func(c operator.Coexistence) error {
		_, err := operator.New(ctx, cp.RESTConfig(), operator.Options{MetricsAddr: "0", HealthAddr: "0", AllowRepeatedControllers: true, Coexistence: c}, logr.Discard())
		return err
	}

	err = newOp(inKarpenterNS)
	var running *operator.KarpenterRunningError
	if !errors.As(err, &running) {
		t.Fatalf("tenon started next to a live Karpenter (error: %v)", err)
	}
	for _, want := range []string{"karpenter/karpenter-leader-election", holder, "renewed " + renewed.UTC().Format(time.RFC3339), "--takeover"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if err := newOp(operator.Coexistence{}); err != nil {
		t.Errorf("with the default Lease namespace (kube-system, where no Karpenter runs) tenon did not start: %v", err)
	}
	takeover := inKarpenterNS
	takeover.Takeover = true
	if err := newOp(takeover); err != nil {
		t.Errorf("with --takeover tenon did not start: %v", err)
	}

	lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now().Add(-2 * time.Hour)))
	if err := kube.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if err := newOp(inKarpenterNS); err != nil {
		t.Errorf("with Karpenter's Lease lapsed tenon did not start: %v", err)
	}
	lease.Spec.HolderIdentity, lease.Spec.RenewTime = ptr.To(""), ptr.To(metav1.NewMicroTime(time.Now()))
	if err := kube.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if err := newOp(inKarpenterNS); err != nil {
		t.Errorf("with Karpenter's Lease released tenon did not start: %v", err)
	}
}

// A leader that stops cleanly (SIGTERM in a rolling update, Ctrl-C in tenon up) releases its
// Lease on the way out, so that the next replica leads at once instead of waiting out a lease
// duration: the Lease is left with no holder.
func TestOperatorReleasesItsLeaseOnStop(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{CRDs: all})
	kube, err := client.New(cp.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	op, err := operator.New(ctx, cp.RESTConfig(), operator.Options{
		MetricsAddr: "0", HealthAddr: "0", AllowRepeatedControllers: true,
		LeaderElection: true, LeaderElectionNamespace: "default", LeaderElectionID: "tenon-release-test",
		LeaseDuration: 60 * time.Second, RenewDeadline: 40 * time.Second, RetryPeriod: time.Second,
	}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	key := types.NamespacedName{Namespace: "default", Name: "tenon-release-test"}
	holder := func() string {
		var l coordinationv1.Lease
		if err := kube.Get(context.Background(), key, &l); err != nil {
			return ""
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	deadline := time.Now().Add(60 * time.Second)
	for holder() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the operator never took its Lease")
		}
		time.Sleep(200 * time.Millisecond)
	}
	<-op.Manager.Elected()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("operator: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the operator did not stop within 60s of its context ending")
	}
	if h := holder(); h != "" {
		t.Errorf("after a clean stop the Lease is still held by %q: the next replica waits out the 60s lease", h)
	}
}
