package cloud

import (
	"fmt"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// SpotNotice is the time between a spot interruption notice and the instance's reclamation.
const SpotNotice = 2 * time.Minute

// ClassConfig is what one NodeClass sells and how its instances behave.
type ClassConfig struct {
	// Catalog is what the class sells, with its reservations and capacity blocks (reservations
	// with a Window) already turned into reserved offerings, price overrides applied and the
	// root volume set.
	Catalog *catalog.Catalog
	// Pools limit concurrent instances in the on-demand and spot offerings they select.
	Pools []Pool
	// Targeted lists the IDs of the targeted reservations: only requests whose requirements
	// name the ID (capacity-reservation-id In [...]) may use them.
	Targeted []string
	Delays   Delays
	// Interruptions configures spot interruptions and scheduled maintenance.
	Interruptions Interruptions
}

// Pool is a limit on concurrent instances shared by every on-demand and spot offering that
// Match selects. Match is read against the labels a node bought through the offering would
// carry (the type's labels plus zone, zone ID and capacity type); reserved offerings are never
// selected.
//
// A pool with Offering set selects that one offering (its instance type, zone and capacity
// type) instead, found by key rather than by matching: a cloud can then have a pool for each
// of thousands of offerings (the simulator's finite spot capacity) at no cost per launch.
type Pool struct {
	Match    scheduling.Requirements
	Offering *OfferingKey
	Capacity int
}

// OfferingKey names one on-demand or spot offering.
type OfferingKey struct {
	InstanceType, Zone, CapacityType string
}

// Delays are the durations of an instance's life.
type Delays struct {
	// Boot: from launch until Running.
	Boot time.Duration
	// Registration: from Running until the Node registers.
	Registration time.Duration
	// DevicePlugin: from registration until device resources (GPUs, Neuron devices, EFA)
	// appear on the Node; only for types that have them.
	DevicePlugin time.Duration
	// Shutdown: from the start of termination until the instance is gone and its capacity free.
	Shutdown time.Duration
}

// SpotModel chooses how spot instances are interrupted.
type SpotModel int

const (
	// SpotNone: only injected interruptions.
	SpotNone SpotModel = iota
	// SpotAdvisor: rates from the Spot Instance Advisor's buckets (see the package doc).
	SpotAdvisor
)

// Interruptions configures the events that take instances away.
type Interruptions struct {
	Spot SpotModel
	// Seed makes the draws reproducible; each instance's draws depend on Seed and its ID only.
	Seed int64
	// Scale multiplies the advisor's rates (1: as published; 0: never).
	Scale float64
	// RebalanceLead is how long before a spot interruption notice the rebalance
	// recommendation comes.
	RebalanceLead time.Duration
	// MaintenanceInterval is the mean time until an instance is retired by scheduled
	// maintenance; 0 disables it.
	MaintenanceInterval time.Duration
	// MaintenanceNotice is the notice before a retirement (maintenance, capacity-block end).
	MaintenanceNotice time.Duration
}

func (cfg *ClassConfig) validate() error {
	if cfg.Catalog == nil {
		return fmt.Errorf("no catalog")
	}
	for i, p := range cfg.Pools {
		if p.Capacity < 0 {
			return fmt.Errorf("pool %d: negative capacity %d", i, p.Capacity)
		}
		if k := p.Offering; k != nil && (k.InstanceType == "" || k.Zone == "" || k.CapacityType == apisv1.CapacityTypeReserved) {
			return fmt.Errorf("pool %d: an offering pool names an instance type, a zone and an on-demand or spot capacity type: %+v", i, *k)
		}
	}
	d := cfg.Delays
	if d.Boot < 0 || d.Registration < 0 || d.DevicePlugin < 0 || d.Shutdown < 0 {
		return fmt.Errorf("negative delay in %+v", d)
	}
	in := cfg.Interruptions
	if in.Scale < 0 || in.RebalanceLead < 0 || in.MaintenanceInterval < 0 || in.MaintenanceNotice < 0 {
		return fmt.Errorf("negative interruption setting in %+v", in)
	}
	return nil
}
