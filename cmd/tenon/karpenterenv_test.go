package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tenon-sh/tenon/internal/version"
	"github.com/tenon-sh/tenon/pkg/solver"
)

func parseEnv(t *testing.T, args ...string) (*controllerFlags, error) {
	t.Helper()
	f := &controllerFlags{}
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return f, fromEnv(fs)
}

// Each environment variable of Karpenter's chart configures the same setting of `tenon
// controller`.
func TestKarpenterEnvironmentVariablesConfigureTheController(t *testing.T) {
	for _, tc := range []struct {
		env, value string
		check      func(f *controllerFlags) bool
	}{
		{"KUBE_CLIENT_QPS", "55", func(f *controllerFlags) bool { return f.opts.KubeClientQPS == 55 }},
		{"KUBE_CLIENT_BURST", "77", func(f *controllerFlags) bool { return f.opts.KubeClientBurst == 77 }},
		{"ENABLE_PROFILING", "true", func(f *controllerFlags) bool { return f.opts.EnableProfiling }},
		{"BATCH_IDLE_DURATION", "2s", func(f *controllerFlags) bool { return f.opts.Provisioning.BatchIdle == 2*time.Second }},
		{"BATCH_MAX_DURATION", "20s", func(f *controllerFlags) bool { return f.opts.Provisioning.BatchMax == 20*time.Second }},
		{"FEATURE_GATES", "SpotToSpotConsolidation=true,StaticCapacity=true", func(f *controllerFlags) bool {
			return f.opts.Disruption.Decision.SpotToSpotConsolidation && f.opts.StaticCapacity
		}},
		{"LOG_LEVEL", "debug", func(f *controllerFlags) bool { return f.logLevel == "debug" }},
		{"MIN_VALUES_POLICY", "BestEffort", func(f *controllerFlags) bool {
			return f.opts.Disruption.Decision.MinValuesPolicy == solver.MinValuesBestEffort // the operator gives it to provisioning too
		}},
		{"PREFERENCE_POLICY", "Ignore", func(f *controllerFlags) bool {
			return f.opts.Disruption.Decision.PreferencePolicy == solver.PreferenceIgnore // the operator gives it to provisioning too
		}},
		{"LEADER_ELECTION_NAMESPACE", "kube-system", func(f *controllerFlags) bool { return f.opts.LeaderElectionNamespace == "kube-system" }},
		{"METRICS_PORT", "9090", func(f *controllerFlags) bool { return f.opts.MetricsAddr == ":9090" }},
		{"HEALTH_PROBE_PORT", "9091", func(f *controllerFlags) bool { return f.opts.HealthAddr == ":9091" }},
		{"DISABLE_LEADER_ELECTION", "true", func(f *controllerFlags) bool { return !f.opts.LeaderElection }},
	} {
		t.Run(tc.env, func(t *testing.T) {
			f, err := parseEnv(t)
			if err != nil {
				t.Fatal(err)
			}
			if tc.check(f) {
				t.Fatalf("the default already passes the check; the test would prove nothing")
			}
			t.Setenv(tc.env, tc.value)
			if f, err = parseEnv(t); err != nil {
				t.Fatalf("%s=%s: %v", tc.env, tc.value, err)
			}
			if !tc.check(f) {
				t.Errorf("%s=%s did not reach the controller's options: %+v", tc.env, tc.value, f.opts)
			}
		})
	}
}

// TENON_<FLAG> wins over Karpenter's variable, and the command line over both.
func TestTenonEnvironmentAndFlagsWinOverKarpenters(t *testing.T) {
	t.Setenv("KUBE_CLIENT_QPS", "10")
	t.Setenv("TENON_KUBE_CLIENT_QPS", "20")
	f, err := parseEnv(t)
	if err != nil || f.opts.KubeClientQPS != 20 {
		t.Fatalf("TENON_KUBE_CLIENT_QPS=20 over KUBE_CLIENT_QPS=10: got %v, %v", f.opts.KubeClientQPS, err)
	}
	if f, err = parseEnv(t, "--kube-client-qps", "30"); err != nil || f.opts.KubeClientQPS != 30 {
		t.Fatalf("--kube-client-qps 30 over both: got %v, %v", f.opts.KubeClientQPS, err)
	}
	t.Setenv("METRICS_PORT", "9090")
	t.Setenv("TENON_METRICS_BIND_ADDRESS", "127.0.0.1:7000")
	if f, err = parseEnv(t); err != nil || f.opts.MetricsAddr != "127.0.0.1:7000" {
		t.Fatalf("TENON_METRICS_BIND_ADDRESS over METRICS_PORT: got %q, %v", f.opts.MetricsAddr, err)
	}
}

func TestBadKarpenterEnvironmentValueNamesTheVariable(t *testing.T) {
	for env, value := range map[string]string{"METRICS_PORT": "http", "KUBE_CLIENT_BURST": "lots", "DISABLE_LEADER_ELECTION": "maybe", "MIN_VALUES_POLICY": "Sometimes", "PREFERENCE_POLICY": "Never"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, value)
			if _, err := parseEnv(t); err == nil || !strings.Contains(err.Error(), env) {
				t.Errorf("%s=%s: %v; want an error naming the variable", env, value, err)
			}
		})
	}
}

func TestEveryKarpenterVariableNamesAFlag(t *testing.T) {
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	(&controllerFlags{}).register(fs)
	for flag, k := range karpenterEnv {
		if fs.Lookup(flag) == nil {
			t.Errorf("%s maps to --%s, which `tenon controller` does not have", k.name, flag)
		}
	}
}

func TestKubeClientAndProfilingFlags(t *testing.T) {
	f, err := parseEnv(t, "--kube-client-qps", "12.5", "--kube-client-burst", "25", "--enable-profiling")
	if err != nil {
		t.Fatal(err)
	}
	if f.opts.KubeClientQPS != 12.5 || f.opts.KubeClientBurst != 25 || !f.opts.EnableProfiling {
		t.Errorf("flags not applied: qps %v burst %v profiling %v", f.opts.KubeClientQPS, f.opts.KubeClientBurst, f.opts.EnableProfiling)
	}
}

// The JSON log lines carry the keys Karpenter's do: time, level, message, logger.
func TestLogLinesUseTheEcosystemKeys(t *testing.T) {
	opts, err := newLogger("info", "json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zap.New(opts, zap.WriteTo(&buf)).WithName("provisioner").Info("starting tenon", "version", "v1.2.3")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%q: %v", buf.String(), err)
	}
	for k, want := range map[string]string{"level": "info", "message": "starting tenon", "logger": "provisioner", "version": "v1.2.3"} {
		if line[k] != want {
			t.Errorf("log key %s = %v, want %q (line %s)", k, line[k], want, buf.String())
		}
	}
	if ts, _ := line["time"].(string); !strings.Contains(ts, "T") {
		t.Errorf("time = %v, want an ISO 8601 timestamp", line["time"])
	}
	for _, old := range []string{"ts", "msg"} {
		if _, ok := line[old]; ok {
			t.Errorf("the line still has the key %q: %s", old, buf.String())
		}
	}
}

// The start-up line logs the version and commit under the keys Karpenter uses.
func TestStartupLogCarriesVersion(t *testing.T) {
	f, err := parseEnv(t)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := newLogger("info", "json")
	var buf bytes.Buffer
	zap.New(opts, zap.WriteTo(&buf)).Info("starting tenon", f.startupValues()...)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	v := version.Get()
	if line["version"] != v.Version || line["commit"] != v.Commit || v.Version == "" {
		t.Errorf("start-up line %s lacks version %q and commit %q", buf.String(), v.Version, v.Commit)
	}
}
