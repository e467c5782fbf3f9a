package v1alpha1

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The accessors below return a field's value, or its default when it is unset, so that a spec
// built in Go (the offline simulator, tests) behaves like one the API server has defaulted.

// GetRegion returns the region, DefaultRegion when unset.
func (in *SimNodeClassSpec) GetRegion() string {
	if in.Region == "" {
		return DefaultRegion
	}
	return in.Region
}

// GetBootDelay returns the boot delay (default 2s).
func (in *SimNodeClassSpec) GetBootDelay() time.Duration {
	return durationOr(in.BootDelay, DefaultBootDelay)
}

// GetRegistrationDelay returns the registration delay (default 1s).
func (in *SimNodeClassSpec) GetRegistrationDelay() time.Duration {
	return durationOr(in.RegistrationDelay, DefaultRegistrationDelay)
}

// GetDevicePluginDelay returns the device-plugin delay (default 3s).
func (in *SimNodeClassSpec) GetDevicePluginDelay() time.Duration {
	return durationOr(in.DevicePluginDelay, DefaultDevicePluginDelay)
}

// GetShutdownDelay returns the shutdown delay (default 0s).
func (in *SimNodeClassSpec) GetShutdownDelay() time.Duration {
	return durationOr(in.ShutdownDelay, DefaultShutdownDelay)
}

// GetRootVolumeSize returns the root volume size in bytes (default 20Gi).
func (in *SimNodeClassSpec) GetRootVolumeSize() int64 {
	if in.RootVolumeSize == nil {
		q := resource.MustParse(DefaultRootVolumeSize)
		return q.Value()
	}
	return in.RootVolumeSize.Value()
}

// GetSpotInterruptionModel returns the spot interruption model (default none).
func (in *Interruptions) GetSpotInterruptionModel() SpotInterruptionModel {
	if in.SpotInterruptionModel == "" {
		return SpotInterruptionNone
	}
	return in.SpotInterruptionModel
}

// GetScalePercent returns the rate scale in percent (default 100).
func (in *Interruptions) GetScalePercent() int32 {
	if in.ScalePercent == nil {
		return DefaultScalePercent
	}
	return *in.ScalePercent
}

// GetRebalanceLead returns the rebalance recommendation's lead (default 5m).
func (in *Interruptions) GetRebalanceLead() time.Duration {
	return durationOr(in.RebalanceLead, DefaultRebalanceLead)
}

// GetMaintenanceInterval returns the mean time to scheduled maintenance; 0 means none.
func (in *Interruptions) GetMaintenanceInterval() time.Duration {
	return durationOr(in.MaintenanceInterval, "0s")
}

// GetMaintenanceNotice returns the notice before a retirement (default 10m).
func (in *Interruptions) GetMaintenanceNotice() time.Duration {
	return durationOr(in.MaintenanceNotice, DefaultMaintenanceNotice)
}

func durationOr(d *metav1.Duration, def string) time.Duration {
	if d != nil {
		return d.Duration
	}
	v, err := time.ParseDuration(def)
	if err != nil {
		panic("v1alpha1: bad default duration " + def)
	}
	return v
}
