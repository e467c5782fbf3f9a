package catalog

import (
	"fmt"
	"strings"
)

// DefaultRegion is the region Load uses when given "".
const DefaultRegion = "us-east-1"

// Zone is an availability zone: its name as seen in a node's topology.kubernetes.io/zone label and
// its zone ID (topology.k8s.aws/zone-id), which names the same physical location in every account.
type Zone struct {
	Name string
	ID   string
}

// region describes a region the embedded catalog can sell in.
//
// AWS maps zone names to zone IDs differently in every account; the catalog fixes one mapping,
// letter n of the alphabet to az<n> (us-east-1a ↔ use1-az1, ..., us-east-1f ↔ use1-az6), so that
// zonal spot prices (published per zone ID) land in a stable zone name. Local zones
// (use1-atl2-az1, usw2-lax1-az1, ...) are left out.
type region struct {
	name  string
	zones []Zone
	// capacityBlockOnly lists the types sold in the region only through capacity blocks: they
	// have no on-demand price, are listed anyway, and get offerings only from reservations.
	capacityBlockOnly []string
}

var regions = [...]region{
	{
		name:              "us-east-1",
		zones:             letteredZones("us-east-1", "use1", 6),
		capacityBlockOnly: []string{"p5e.48xlarge", "trn2.48xlarge"},
	},
	{
		name:  "us-west-2",
		zones: letteredZones("us-west-2", "usw2", 4),
	},
}

func letteredZones(region, idPrefix string, n int) []Zone {
	zones := make([]Zone, n)
	for i := range zones {
		zones[i] = Zone{Name: fmt.Sprintf("%s%c", region, 'a'+i), ID: fmt.Sprintf("%s-az%d", idPrefix, i+1)}
	}
	return zones
}

// Regions returns the regions the embedded catalog covers.
func Regions() []string {
	out := make([]string, len(regions))
	for i, r := range regions {
		out[i] = r.name
	}
	return out
}

func findRegion(name string) (int, error) {
	if name == "" {
		name = DefaultRegion
	}
	for i, r := range regions {
		if r.name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("region %q is not in the embedded catalog (have %s)", name, strings.Join(Regions(), ", "))
}
