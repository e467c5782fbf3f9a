package main

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// The Helm chart passes `tenon controller` only flags it has, with values it accepts: the
// arguments of the chart's default Deployment (charts/testdata/tenon-default.yaml, the golden
// file charts' tests keep equal to what the chart renders) parse, and mean what the chart says.
func TestChartDeploymentArgsAreControllerFlags(t *testing.T) {
	b, err := os.ReadFile("../../charts/testdata/tenon-default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if !strings.Contains(doc, "kind: Deployment\n") {
			continue
		}
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		args = d.Spec.Template.Spec.Containers[0].Args
	}
	if len(args) < 2 || args[0] != "controller" {
		t.Fatalf("the chart's Deployment runs %v, want the controller subcommand first", args)
	}
	f := &controllerFlags{}
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatalf("tenon controller refuses the chart's arguments %v: %v", args[1:], err)
	}
	if _, err := newLogger(f.logLevel, f.logFormat); err != nil {
		t.Errorf("the chart's log settings: %v", err)
	}
	if !f.opts.LeaderElection || f.opts.LeaderElectionNamespace != "tenon-system" || f.opts.MetricsAddr != ":8080" || f.opts.HealthAddr != ":8081" {
		t.Errorf("parsed %+v from the chart's arguments", f.opts)
	}
	if c := f.opts.Coexistence; c.Takeover || c.KarpenterLease.Namespace != "kube-system" || c.KarpenterLease.Name != "karpenter-leader-election" {
		t.Errorf("the chart's arguments say %+v about Karpenter, want its Lease kube-system/karpenter-leader-election checked, no takeover", c)
	}
}
