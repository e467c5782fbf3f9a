package operator_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

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
