package featuregates

import (
	"strings"
	"testing"
)

func TestFeatureGatesTakeKarpentersNamesAndDefaults(t *testing.T) {
	g, err := Parse("")
	if err != nil || g != (Gates{ReservedCapacity: true}) {
		t.Fatalf("defaults = %+v, %v; want spot-to-spot off and reserved capacity on, as Karpenter", g, err)
	}
	g, err = Parse("SpotToSpotConsolidation=true, NodeRepair=false,ReservedCapacity=true,StaticCapacity=false,NodeOverlay=false,CapacityBuffer=false")
	if err != nil || !g.SpotToSpotConsolidation || !g.ReservedCapacity {
		t.Fatalf("Parse = %+v, %v", g, err)
	}
	if g, _ := Parse(g.String()); !g.SpotToSpotConsolidation {
		t.Errorf("String does not round-trip: %s", g)
	}
}

func TestFeatureGatesRefuseUnknownAndUnsupportedGatesByName(t *testing.T) {
	for in, want := range map[string]string{
		"SpotToSpot=true":               `unknown feature gate "SpotToSpot"`,
		"spottospotconsolidation=true":  `unknown feature gate "spottospotconsolidation"`,
		"SpotToSpotConsolidation=maybe": "feature gate SpotToSpotConsolidation",
		"SpotToSpotConsolidation":       "feature gate \"SpotToSpotConsolidation\"",
		"NodeRepair=true":               "feature gate NodeRepair=true is not supported",
		"ReservedCapacity=false":        "feature gate ReservedCapacity=false is not supported",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want an error containing %q", in, err, want)
		}
	}
}

func TestFeatureGateStaticCapacityIsOffByDefaultAndCanBeSwitchedOn(t *testing.T) {
	if g, _ := Parse(""); g.StaticCapacity {
		t.Error("StaticCapacity is on by default; Karpenter's default is off")
	}
	g, err := Parse("StaticCapacity=true")
	if err != nil || !g.StaticCapacity {
		t.Fatalf("Parse(StaticCapacity=true) = %+v, %v", g, err)
	}
	if g, _ := Parse(g.String()); !g.StaticCapacity {
		t.Errorf("String does not round-trip: %s", g)
	}
}

func TestFeatureGateNodeOverlayIsOffByDefaultAndCanBeSwitchedOn(t *testing.T) {
	if g, _ := Parse(""); g.NodeOverlay {
		t.Error("NodeOverlay is on by default; Karpenter's default is off")
	}
	g, err := Parse("NodeOverlay=true")
	if err != nil || !g.NodeOverlay {
		t.Fatalf("Parse(NodeOverlay=true) = %+v, %v", g, err)
	}
	if g, _ := Parse(g.String()); !g.NodeOverlay {
		t.Errorf("String does not round-trip: %s", g)
	}
}
