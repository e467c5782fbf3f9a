package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// BenchmarkProvisioning measures the whole loop on a real control plane: N pending pods from
// Deployments → the batch window closes → all NodeClaims created → all pods bound by
// kube-scheduler. It reports the seconds of each stage, the controller's CPU seconds over the
// run and the process's peak RSS (the control plane runs in other processes).
func BenchmarkProvisioning(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchProvision(b, n)
			}
		})
	}
}

func benchProvision(b *testing.B, n int) {
	cp, kube := benchControlPlane(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var first *provisioning.Result
	var windowClosed, claimsCreated time.Time
	opts := operator.Options{MetricsAddr: "0", HealthAddr: "0", AllowRepeatedControllers: true}
	opts.Provisioning.NoNomination = os.Getenv("TENON_BENCH_NO_NOMINATE") != "" // for the before/after figure
	opts.Provisioning.BatchIdle, opts.Provisioning.BatchMax = time.Second, 10*time.Second
	opts.Provisioning.OnBatch = func(res *provisioning.Result, start, end time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil && len(res.Claims) > 0 {
			first, windowClosed, claimsCreated = res, start, end
		} else if first != nil && len(res.Claims) > 0 {
			// Said in the log: a later batch that buys is what nomination is meant to avoid.
			b.Logf("a later batch, %s after the first closed: %d pods, %d NodeClaims", start.Sub(windowClosed).Round(time.Millisecond), res.Pods, len(res.Claims))
		}
	}
	for _, o := range []client.Object{nodeClass("default"), nodePool("general", "default", []string{"m5", "c5", "r5", "m6i", "c6i"})} {
		if err := kube.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	// All pods exist and kube-scheduler has found no node for them before tenon starts, so the
	// first batch holds all of them.
	per := int32(n / 10)
	for d := 0; d < 10; d++ {
		cpu, mem := []string{"250m", "500m", "1"}[d%3], []string{"256Mi", "1Gi", "2Gi"}[d%3]
		if err := kube.Create(ctx, deployment(fmt.Sprintf("app-%d", d), per, cpu, mem)); err != nil {
			b.Fatal(err)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, false, func(context.Context) (bool, error) {
		var pods corev1.PodList
		if err := kube.List(ctx, &pods, client.InNamespace("default")); err != nil {
			return false, nil
		}
		unschedulable := 0
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
					unschedulable++
				}
			}
		}
		return unschedulable == n, nil
	}); err != nil {
		b.Fatalf("pods not all pending: %v", err)
	}
	cpu0 := cpuSeconds()
	b.ResetTimer()
	op, err := operator.New(ctx, cp.RESTConfig(), opts, discard())
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = op.Start(ctx) }()
	var bound time.Time
	err = wait.PollUntilContextTimeout(ctx, time.Second, 30*time.Minute, false, func(context.Context) (bool, error) {
		// One unbound pod is enough to know the run is not over: the poll stays cheap for the
		// API server and for this process, whose CPU is what is measured.
		var pods corev1.PodList
		if err := kube.List(ctx, &pods, client.InNamespace("default"), client.MatchingFields{"spec.nodeName": ""}, client.Limit(1)); err != nil {
			return false, nil
		}
		if len(pods.Items) == 0 {
			bound = time.Now()
			return true, nil
		}
		return false, nil
	})
	b.StopTimer()
	if err != nil {
		b.Fatalf("pods not all bound: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if first == nil {
		b.Fatal("no batch created claims")
	}
	b.ReportMetric(claimsCreated.Sub(windowClosed).Seconds(), "s-window-to-claims")
	b.ReportMetric(bound.Sub(windowClosed).Seconds(), "s-window-to-bound")
	b.ReportMetric(first.Solved.Seconds(), "s-solve")
	b.ReportMetric(first.Created.Seconds(), "s-create")
	b.ReportMetric(float64(len(first.Claims)), "claims-first-batch")
	b.ReportMetric(float64(first.Pods), "pods-first-batch")
	b.ReportMetric(cpuSeconds()-cpu0, "controller-cpu-s")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
	// Claims bought after the first batch's: zero when every pod bound where it was planned.
	var claims apisv1.NodeClaimList
	if err := kube.List(ctx, &claims); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(claims.Items)-len(first.Claims)), "claims-beyond-first-plan")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// peakRSS is the process's high-water resident set, in bytes (Linux reports kilobytes).
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024
}

// benchControlPlane starts the whole control plane (kube-scheduler, kube-controller-manager and
// kwok included, their client rate limits raised so that they do not pace a benchmark) with
// tenon's CRDs, and a client of it.
func benchControlPlane(b *testing.B) (*controlplane.ControlPlane, client.Client) {
	b.Helper()
	all, err := crds.CRDs()
	if err != nil {
		b.Fatal(err)
	}
	fast := []string{"--kube-api-qps=2000", "--kube-api-burst=4000"}
	cp := testenv.Start(b, controlplane.Options{Scheduler: true, ControllerManager: true, Kwok: true, CRDs: all,
		ExtraArgs: map[string][]string{controlplane.ControllerManager: fast, controlplane.Scheduler: fast}})
	kube, err := client.New(cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	return cp, kube
}
