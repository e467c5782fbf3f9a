package sim

import (
	"cmp"
	"fmt"
	"slices"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// DefaultSpotCapacityVCPUs is how many vCPUs of one instance type a spot offering (one zone) of
// the lowest interruption bucket sells at once in the simulator's finite spot model.
const DefaultSpotCapacityVCPUs = 4096

// spotPools are the capacity pools of the finite spot model for the types the class sells to
// the pools that use it: each spot offering (type and zone) sells at most vcpus vCPUs at
// once, halved for each Spot Advisor interruption bucket above the lowest (<5%: all of it,
// 5–10%: half, ..., >20%: a sixteenth; a type the advisor does not list as the 10–15%
// bucket), and at least one instance. AWS publishes no pool sizes: the numbers are a model of
// the one thing the advisor does say, that the pools interrupted most are the ones short of
// capacity, and the report prints them.
func spotPools(env *Env, class string, vcpus int64) []cloud.Pool {
	seen := map[cloud.OfferingKey]bool{}
	var out []cloud.Pool
	for _, p := range env.Pools {
		if p.Class != class {
			continue
		}
		for _, it := range p.Types {
			bucket := 2
			if a := it.SpotAdvice; a.Known && a.Bucket >= 0 && a.Bucket <= 4 {
				bucket = a.Bucket
			}
			cpus := max(it.Capacity[scheduling.CPU]/1000, 1)
			n := max(vcpus>>bucket/cpus, 1)
			for _, o := range it.Offerings {
				k := cloud.OfferingKey{InstanceType: it.Name, Zone: o.Zone, CapacityType: o.CapacityType}
				if o.CapacityType != apisv1.CapacityTypeSpot || seen[k] {
					continue
				}
				seen[k] = true
				out = append(out, cloud.Pool{Offering: &k, Capacity: int(n)})
			}
		}
	}
	slices.SortFunc(out, func(a, b cloud.Pool) int {
		return cmp.Or(cmp.Compare(a.Offering.InstanceType, b.Offering.InstanceType), cmp.Compare(a.Offering.Zone, b.Offering.Zone))
	})
	return out
}

// spotCapacityAssumption says what the finite spot model sold.
func spotCapacityAssumption(vcpus int64) string {
	return fmt.Sprintf("spot capacity is finite (--spot-capacity advisor): each spot offering (instance type and zone) sells at most %d vCPUs at once for the Spot Advisor's lowest interruption bucket (<5%%), half as many for each bucket above (a sixteenth for >20%%), and at least one instance; a launch into a full pool fails with insufficient capacity, as EC2's does; the bound leaves the limits out (it stays a floor). AWS publishes no pool sizes: this is a model, and --spot-capacity unlimited (the default) replays without it", vcpus)
}
