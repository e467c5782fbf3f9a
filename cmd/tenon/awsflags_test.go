package main

import (
	"testing"

	"github.com/spf13/pflag"
)

// The AWS flags take Karpenter's environment variables, under TENON_<NAME> and the command line.
func TestAWSFlagsReadKarpentersEnvironment(t *testing.T) {
	t.Setenv("CLUSTER_NAME", "from-karpenter-env")
	t.Setenv("INTERRUPTION_QUEUE", "karpenter-queue")
	t.Setenv("TENON_INTERRUPTION_QUEUE", "tenon-queue")
	t.Setenv("ISOLATED_VPC", "true")
	t.Setenv("CLUSTER_ENDPOINT", "https://env")
	f := &controllerFlags{}
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--cluster-endpoint=https://flag"}); err != nil {
		t.Fatal(err)
	}
	if err := fromEnv(fs); err != nil {
		t.Fatal(err)
	}
	if err := fromKarpenterEnv(fs); err != nil {
		t.Fatal(err)
	}
	c := f.opts.AWS
	if c.ClusterName != "from-karpenter-env" || c.InterruptionQueue != "tenon-queue" || !c.IsolatedVPC || c.ClusterEndpoint != "https://flag" || c.VMMemoryOverheadPercent != 0.075 {
		t.Fatalf("got %+v", c)
	}
	t.Setenv("VM_MEMORY_OVERHEAD_PERCENT", "many")
	fs = pflag.NewFlagSet("controller", pflag.ContinueOnError)
	(&controllerFlags{}).register(fs)
	if err := fromKarpenterEnv(fs); err == nil {
		t.Fatal("a bad VM_MEMORY_OVERHEAD_PERCENT should be an error naming it")
	}
}
