package catalog

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The embedded data; see data/README.md for where each file comes from.
var (
	//go:embed data/instance_types_extended.csv
	instanceTypesCSV string
	//go:embed data/spot_prices_us_zones.csv
	spotPricesCSV string
	//go:embed data/spot_advisor.csv
	spotAdvisorCSV string
)

const numRegions = len(regions)

// table is the embedded data parsed once, independent of region and options: Load builds
// catalogs from it.
type table struct {
	types []rawType // sorted by name
}

type rawType struct {
	name  string
	shape Shape
	// onDemand is the on-demand price per region (0: not sold on demand there).
	onDemand [numRegions]float64
	// zonalSpot holds the per-zone spot rows of each region (nil: none known). A row without a
	// price says the type is in the zone but not sold as spot there.
	zonalSpot [numRegions][]zonalSpot
	advice    [numRegions]SpotAdvice
}

type zonalSpot struct {
	zoneID string
	price  float64 // 0: no spot price in this zone
}

// embedded returns the parsed embedded data, parsing it on first use.
var embedded = sync.OnceValues(func() (*table, error) {
	return parseTable(instanceTypesCSV, spotPricesCSV, spotAdvisorCSV)
})

func parseTable(types, spot, advisor string) (*table, error) {
	t := &table{}
	if err := t.parseTypes(types); err != nil {
		return nil, err
	}
	if err := t.parseZonalSpot(spot); err != nil {
		return nil, err
	}
	if err := t.parseAdvisor(advisor); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *table) find(name string) *rawType {
	i, ok := slices.BinarySearchFunc(t.types, name, func(r rawType, n string) int { return strings.Compare(r.name, n) })
	if !ok {
		return nil
	}
	return &t.types[i]
}

func regionIndex(name string) int {
	for i, r := range regions {
		if r.name == name {
			return i
		}
	}
	return -1
}

var typeColumns = func() []string {
	cols := []string{
		"name", "family", "generation", "category", "arch", "vcpu", "memory_mib",
		"gpu_count", "gpu_name", "gpu_manufacturer", "gpu_memory_mib", "max_pods", "network_gbps",
		"local_nvme_gb", "size", "cpu_manufacturer", "hypervisor", "accelerator_type",
		"ebs_bandwidth_mbps", "network_bandwidth_mbps", "efa", "neuroncore", "bare_metal",
		"eni_count", "ipv4_per_eni", "default_card_enis",
	}
	for _, r := range regions {
		cols = append(cols, "od_price_"+strings.ReplaceAll(r.name, "-", "_"))
	}
	return cols
}()

func (t *table) parseTypes(data string) error {
	p := fieldParser{columns: typeColumns}
	err := scanCSV("instance_types_extended.csv", data, typeColumns, func(f []string) error {
		r := rawType{name: f[0]}
		s := &r.shape
		s.Family, s.Category, s.Arch, s.Size = f[1], f[3], f[4], f[14]
		s.Generation = int(p.int(f, 2))
		s.VCPU = int(p.int(f, 5))
		s.MemoryMiB = p.int(f, 6)
		s.MaxPods = int(p.int(f, 11))
		s.NetworkGbps, _ = p.float(f, 12)
		s.LocalNVMeGB = p.int(f, 13)
		s.CPUManufacturer, s.Hypervisor = f[15], f[16]
		s.EBSBandwidthMbps = p.int(f, 18)
		s.NetworkBandwidthMbps = p.int(f, 19)
		s.EFA = int(p.int(f, 20))
		s.NeuronCores = int(p.int(f, 21))
		s.BareMetal = p.bool(f, 22)
		s.ENIs = int(p.int(f, 23))
		s.IPv4PerENI = int(p.int(f, 24))
		s.CardENIs = int(p.int(f, 25))
		count, name, maker, mem := int(p.int(f, 7)), f[8], f[9], p.int(f, 10)
		switch f[17] {
		case "":
			if count != 0 || name != "" {
				return fmt.Errorf("%s: gpu columns set without an accelerator_type", r.name)
			}
		case "gpu":
			s.GPUCount, s.GPUName, s.GPUManufacturer, s.GPUMemoryMiB = count, name, maker, mem
		case "neuron", "accelerator":
			s.AcceleratorCount, s.AcceleratorName, s.AcceleratorManufacturer, s.AcceleratorMemoryMiB = count, name, maker, mem
		default:
			return fmt.Errorf("%s: unknown accelerator_type %q", r.name, f[17])
		}
		for i := range regions {
			r.onDemand[i], _ = p.float(f, len(typeColumns)-numRegions+i)
		}
		if p.err != nil {
			return fmt.Errorf("%s: %w", r.name, p.err)
		}
		if r.name == "" || s.VCPU == 0 || s.MemoryMiB == 0 || s.MaxPods == 0 {
			return fmt.Errorf("%q: name, vcpu, memory_mib and max_pods are required", r.name)
		}
		if s.Arch != "amd64" && s.Arch != "arm64" {
			return fmt.Errorf("%s: unknown arch %q", r.name, s.Arch)
		}
		t.types = append(t.types, r)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(t.types, func(a, b rawType) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(t.types); i++ {
		if t.types[i].name == t.types[i-1].name {
			return fmt.Errorf("instance_types_extended.csv: %s is listed twice", t.types[i].name)
		}
	}
	return nil
}

var spotColumns = []string{"instance_type", "region", "zone_id", "spot_price_usd_hr"}

func (t *table) parseZonalSpot(data string) error {
	p := fieldParser{columns: spotColumns}
	return scanCSV("spot_prices_us_zones.csv", data, spotColumns, func(f []string) error {
		ri := regionIndex(f[1])
		if ri < 0 {
			return nil
		}
		r := t.find(f[0])
		if r == nil {
			return fmt.Errorf("unknown instance type %q", f[0])
		}
		price, _ := p.float(f, 3)
		if p.err != nil {
			return p.err
		}
		r.zonalSpot[ri] = append(r.zonalSpot[ri], zonalSpot{zoneID: f[2], price: price})
		return nil
	})
}

var advisorColumns = []string{"region", "instance_type", "savings_vs_ondemand_pct", "interruption_bucket", "interruption_label", "interruption_max_pct"}

func (t *table) parseAdvisor(data string) error {
	p := fieldParser{columns: advisorColumns}
	return scanCSV("spot_advisor.csv", data, advisorColumns, func(f []string) error {
		ri := regionIndex(f[0])
		if ri < 0 {
			return nil
		}
		r := t.find(f[1])
		if r == nil {
			// The advisor covers types the shape reference does not; they cannot be sold anyway.
			return nil
		}
		a := SpotAdvice{
			Known:              true,
			SavingsPercent:     int(p.int(f, 2)),
			Bucket:             int(p.int(f, 3)),
			Label:              f[4],
			MaxInterruptionPct: int(p.int(f, 5)),
		}
		if p.err != nil {
			return p.err
		}
		if a.SavingsPercent > 100 || a.Bucket > 4 {
			return fmt.Errorf("%s: savings %d%% or bucket %d out of range", f[1], a.SavingsPercent, a.Bucket)
		}
		r.advice[ri] = a
		return nil
	})
}
