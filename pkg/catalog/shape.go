package catalog

// Shape is the raw facts of an instance type, as the data gives them. Everything else about an
// instance type (labels, requirements, capacity, overhead) is derived from its shape, so a
// hand-built type needs only a Shape and its offerings. Zero means unknown or absent.
type Shape struct {
	Family     string // "m5"
	Generation int    // 5
	Category   string // "m"
	Size       string // "2xlarge"
	Arch       string // "amd64" or "arm64"

	VCPU            int
	MemoryMiB       int64
	CPUManufacturer string // "intel", "amd", "aws"
	Hypervisor      string // "nitro", "xen"; "" for bare metal
	BareMetal       bool
	// MaxPods is the pod limit of the VPC CNI without prefix delegation.
	MaxPods int
	// ENIs is the number of network interfaces the type can attach, and IPv4PerENI the IPv4
	// addresses each can hold (EC2's maximumNetworkInterfaces and ipv4AddressesPerInterface).
	ENIs       int
	IPv4PerENI int
	// CardENIs is how many of the ENIs sit on network card 0, the only card the VPC CNI
	// assigns pod addresses from (EC2's maximumNetworkInterfaces of the default network card):
	// MaxPods = CardENIs × (IPv4PerENI − 1) + 2. It equals ENIs on single-card types; zero
	// where the data has no ENI limits.
	CardENIs int

	NetworkGbps          float64 // baseline network bandwidth
	NetworkBandwidthMbps int64   // the network-bandwidth label's figure
	EBSBandwidthMbps     int64
	LocalNVMeGB          int64
	EFA                  int // EFA interfaces

	// GPUs: NVIDIA, AMD and Habana Gaudi devices. GPUMemoryMiB is per device.
	GPUCount        int
	GPUName         string // "a10g", "h100", ...
	GPUManufacturer string // "nvidia", "amd", "habana"
	GPUMemoryMiB    int64
	// MIG, when set, is the MIG layout the GPUs are partitioned in on nodes of this type (a
	// NodePool's copy of the type made by PartitionGPUs); nil means whole GPUs.
	MIG *MIG

	// Other accelerators: AWS Neuron devices (Inferentia, Trainium; manufacturer "aws") and
	// others such as Qualcomm AI 100. AcceleratorMemoryMiB is per device.
	AcceleratorCount        int
	AcceleratorName         string
	AcceleratorManufacturer string
	AcceleratorMemoryMiB    int64
	// NeuronCores is the number of NeuronCores across the Neuron devices.
	NeuronCores int
}

// IsNeuron reports whether the shape's accelerators are AWS Neuron devices.
func (s *Shape) IsNeuron() bool { return s.AcceleratorCount > 0 && s.AcceleratorManufacturer == "aws" }

// SpotAdvice is the AWS Spot Instance Advisor's figures for a type in a region: the average spot
// saving against on-demand and the monthly interruption-frequency bucket (0 "<5%", 1 "5-10%",
// 2 "10-15%", 3 "15-20%", 4 ">20%"). The simulated cloud draws spot interruptions from it.
type SpotAdvice struct {
	Known              bool
	SavingsPercent     int
	Bucket             int
	Label              string // "<5%", ...
	MaxInterruptionPct int    // upper edge of the bucket, in percent per month
}
