// Package featuregates reads Karpenter's --feature-gates flag ("Name=true,Other=false") with
// Karpenter's gate names and defaults, so a cluster moving from Karpenter keeps its behaviour.
//
// tenon implements SpotToSpotConsolidation (default false: a spot node is never replaced by
// spot), ReservedCapacity (default true; tenon always uses reserved capacity, so only true
// is accepted), StaticCapacity (default false: static NodePools, spec.replicas, are kept
// at their replicas only when it is on) and NodeOverlay (default false: NodeOverlays are
// applied to instance types only when it is on). Karpenter's other gates name features tenon does not have: they are accepted
// at their default (false) and refused when switched on, and an unknown name is an error, so
// no gate is silently ignored.
package featuregates

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Gate names, as Karpenter spells them.
const (
	SpotToSpotConsolidation = "SpotToSpotConsolidation"
	ReservedCapacity        = "ReservedCapacity"
	NodeRepair              = "NodeRepair"
	NodeOverlay             = "NodeOverlay"
	StaticCapacity          = "StaticCapacity"
	CapacityBuffer          = "CapacityBuffer"
)

// Gates are the feature gates tenon acts on.
type Gates struct {
	// SpotToSpotConsolidation lets consolidation replace spot nodes by cheaper spot nodes.
	SpotToSpotConsolidation bool
	// ReservedCapacity lets NodePools launch reserved capacity (always true in tenon).
	ReservedCapacity bool
	// StaticCapacity runs the controller that keeps static NodePools at spec.replicas.
	StaticCapacity bool
	// NodeOverlay applies NodeOverlays to the instance types tenon plans with.
	NodeOverlay bool
}

// Defaults returns Karpenter's defaults.
func Defaults() Gates { return Gates{ReservedCapacity: true} }

// gate describes one name the flag accepts.
type gate struct {
	name string
	def  bool
	// fixed, when set, is the only value tenon accepts, and why.
	fixed string
	set   func(*Gates, bool)
}

var gates = []gate{
	{name: SpotToSpotConsolidation, set: func(g *Gates, v bool) { g.SpotToSpotConsolidation = v }},
	{name: ReservedCapacity, def: true, fixed: "tenon always uses reserved capacity a NodePool allows", set: func(g *Gates, v bool) { g.ReservedCapacity = v }},
	{name: NodeRepair, fixed: "tenon does not repair unhealthy nodes"},
	{name: NodeOverlay, set: func(g *Gates, v bool) { g.NodeOverlay = v }},
	{name: StaticCapacity, set: func(g *Gates, v bool) { g.StaticCapacity = v }},
	{name: CapacityBuffer, fixed: "tenon does not implement capacity buffers"},
}

// Parse reads a comma-separated list of Name=bool over the defaults. Names are Karpenter's
// (case-sensitive); an unknown name, a value that is not a boolean, or a gate switched to a
// value tenon cannot honour is an error naming the gate.
func Parse(s string) (Gates, error) {
	g := Defaults()
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return g, fmt.Errorf("feature gate %q: want %s=true or %s=false", name, name, name)
		}
		v, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return g, fmt.Errorf("feature gate %s: %q is not a boolean", name, value)
		}
		i := slices.IndexFunc(gates, func(x gate) bool { return x.name == name })
		if i < 0 {
			return g, fmt.Errorf("unknown feature gate %q (known: %s)", name, strings.Join(Names(), ", "))
		}
		if gt := gates[i]; gt.fixed != "" && v != gt.def {
			return g, fmt.Errorf("feature gate %s=%t is not supported: %s", name, v, gt.fixed)
		}
		if gates[i].set != nil {
			gates[i].set(&g, v)
		}
	}
	return g, nil
}

// Names lists the gates the flag accepts.
func Names() []string {
	out := make([]string, len(gates))
	for i, gt := range gates {
		out[i] = gt.name
	}
	return out
}

// String writes g as the flag would take it, every gate with its value.
func (g Gates) String() string {
	parts := make([]string, len(gates))
	for i, gt := range gates {
		v := gt.def
		switch gt.name {
		case SpotToSpotConsolidation:
			v = g.SpotToSpotConsolidation
		case ReservedCapacity:
			v = g.ReservedCapacity
		case StaticCapacity:
			v = g.StaticCapacity
		case NodeOverlay:
			v = g.NodeOverlay
		}
		parts[i] = gt.name + "=" + strconv.FormatBool(v)
	}
	return strings.Join(parts, ",")
}

// Value is a flag value (pflag.Value) that parses into Gates and calls Apply after each
// successful Set, so a caller can copy the gates into its own options.
type Value struct {
	Gates Gates
	Apply func(Gates)
}

// NewValue returns a Value at the defaults; apply, when not nil, is called with each parsed set.
func NewValue(apply func(Gates)) *Value {
	v := &Value{Gates: Defaults(), Apply: apply}
	if apply != nil {
		apply(v.Gates)
	}
	return v
}

// Set parses s over the defaults.
func (v *Value) Set(s string) error {
	g, err := Parse(s)
	if err != nil {
		return err
	}
	v.Gates = g
	if v.Apply != nil {
		v.Apply(g)
	}
	return nil
}

func (v *Value) String() string { return v.Gates.String() }

// Type names the flag's value in help text.
func (v *Value) Type() string { return "mapStringBool" }
