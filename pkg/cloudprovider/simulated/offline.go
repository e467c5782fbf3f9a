package simulated

import (
	"fmt"
	"slices"
	"time"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// OfflineInstanceTypes returns, with no API server, the instance types a NodePool using this
// SimNodeClass could launch at time at in an empty simulated cloud: the same catalog, zones,
// reservations, capacity blocks and price overrides GetInstanceTypes would serve. Offline tools
// (`tenon plan`, the simulator) use it.
func OfflineInstanceTypes(nc *simv1alpha1.SimNodeClass, np *apisv1.NodePool, at time.Time) ([]*catalog.InstanceType, error) {
	rc, err := resolve(nc)
	if err != nil {
		return nil, fmt.Errorf("SimNodeClass %s: %w", nc.Name, err)
	}
	c := cloud.New(cloud.Options{})
	if err := c.SetClass(nc.Name, rc.cfg); err != nil {
		return nil, fmt.Errorf("SimNodeClass %s: %w", nc.Name, err)
	}
	types, err := c.InstanceTypes(nc.Name, at)
	if err != nil {
		return nil, err
	}
	if len(rc.targeted) == 0 {
		return slices.Clone(types), nil
	}
	return withoutUnnamedTargeted(types, rc, namedReservations(np)), nil
}

// OfflineClassConfig returns, with no API server, the model's configuration of a SimNodeClass:
// its catalog (region, zones, reservations, capacity blocks, price overrides, root volume), its
// capacity pools, delays and interruption settings, as the provider would configure the cloud
// with. The offline simulator drives its own cloud.Cloud with it.
func OfflineClassConfig(nc *simv1alpha1.SimNodeClass) (cloud.ClassConfig, error) {
	rc, err := resolve(nc)
	if err != nil {
		return cloud.ClassConfig{}, fmt.Errorf("SimNodeClass %s: %w", nc.Name, err)
	}
	return rc.cfg, nil
}
