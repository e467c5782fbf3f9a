package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// --feature-gates SpotToSpotConsolidation=… reaches the disruption decision of `tenon
// controller` (and of `tenon explain`, which registers the same flags); it is off by default,
// as in Karpenter, and an unknown gate is refused by name.
func TestFeatureGatesFlagSwitchesSpotToSpotConsolidation(t *testing.T) {
	parse := parseControllerFlags
	f, err := parse()
	if err != nil || f.opts.Disruption.Decision.SpotToSpotConsolidation {
		t.Fatalf("default: spot-to-spot %v, %v; want off", f.opts.Disruption.Decision.SpotToSpotConsolidation, err)
	}
	f, err = parse("--feature-gates", "SpotToSpotConsolidation=true,NodeRepair=false")
	if err != nil || !f.opts.Disruption.Decision.SpotToSpotConsolidation {
		t.Fatalf("SpotToSpotConsolidation=true: spot-to-spot %v, %v", f.opts.Disruption.Decision.SpotToSpotConsolidation, err)
	}
	if _, err := parse("--feature-gates", "SpotToSpotConsolidaton=true"); err == nil || !strings.Contains(err.Error(), `"SpotToSpotConsolidaton"`) {
		t.Errorf("a misspelt gate: %v; want an error naming it", err)
	}
	if _, err := runTenon(t, "simulate", "--feature-gates", "Bogus=true", "--trace", "x.csv"); err == nil || !strings.Contains(err.Error(), `"Bogus"`) {
		t.Errorf("simulate with an unknown gate: %v; want an error naming it", err)
	}
}

// --feature-gates StaticCapacity=true runs the static NodePool controller in `tenon controller`;
// it is off by default, as in Karpenter.
func TestFeatureGatesFlagSwitchesStaticCapacity(t *testing.T) {
	parse := parseControllerFlags
	f, err := parse()
	if err != nil || f.opts.StaticCapacity {
		t.Fatalf("default: StaticCapacity %v, %v; want off", f.opts.StaticCapacity, err)
	}
	f, err = parse("--feature-gates", "StaticCapacity=true")
	if err != nil || !f.opts.StaticCapacity {
		t.Fatalf("StaticCapacity=true: %v, %v; want on", f.opts.StaticCapacity, err)
	}
}

// --feature-gates NodeOverlay=true applies NodeOverlays in `tenon controller`; it is off by
// default, as in Karpenter.
func TestFeatureGatesFlagSwitchesNodeOverlay(t *testing.T) {
	parse := parseControllerFlags
	f, err := parse()
	if err != nil || f.opts.NodeOverlay {
		t.Fatalf("default: NodeOverlay %v, %v; want off", f.opts.NodeOverlay, err)
	}
	f, err = parse("--feature-gates", "NodeOverlay=true")
	if err != nil || !f.opts.NodeOverlay {
		t.Fatalf("NodeOverlay=true: %v, %v; want on", f.opts.NodeOverlay, err)
	}
}

// --nominate-pods is on by default and can be switched off.
func TestNominatePodsFlag(t *testing.T) {
	parse := parseControllerFlags
	if f, err := parse(); err != nil || f.opts.Provisioning.NoNomination {
		t.Fatalf("default: nomination off %v, %v; want on", f.opts.Provisioning.NoNomination, err)
	}
	for arg, on := range map[string]bool{"--nominate-pods=false": false, "--nominate-pods": true, "--nominate-pods=true": true, "--nominate-pods=0": false} {
		if f, err := parse(arg); err != nil || f.opts.Provisioning.NoNomination == on {
			t.Errorf("%s: nomination off %v, %v; want on %v", arg, f.opts.Provisioning.NoNomination, err, on)
		}
	}
	if _, err := parse("--nominate-pods=maybe"); err == nil {
		t.Error("--nominate-pods=maybe was accepted")
	}
}

// parseControllerFlags parses args as `tenon controller` does.
func parseControllerFlags(args ...string) (*controllerFlags, error) {
	f := &controllerFlags{}
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	f.register(fs)
	return f, fs.Parse(args)
}
