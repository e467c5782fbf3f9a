package awsapi

import (
	"fmt"
	"strconv"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// --- DescribeInstanceTypes ---

type instanceTypeInfo struct {
	InstanceType                 string                `xml:"instanceType"`
	CurrentGeneration            bool                  `xml:"currentGeneration"`
	BareMetal                    bool                  `xml:"bareMetal"`
	Hypervisor                   string                `xml:"hypervisor,omitempty"`
	SupportedUsageClasses        []string              `xml:"supportedUsageClasses>item"`
	SupportedRootDeviceTypes     []string              `xml:"supportedRootDeviceTypes>item"`
	SupportedVirtualizationTypes []string              `xml:"supportedVirtualizationTypes>item"`
	ProcessorInfo                processorInfo         `xml:"processorInfo"`
	VCPUInfo                     vcpuInfo              `xml:"vCpuInfo"`
	MemoryInfo                   sizeInMiB             `xml:"memoryInfo"`
	InstanceStorageSupported     bool                  `xml:"instanceStorageSupported"`
	InstanceStorageInfo          *instanceStorageInfo  `xml:"instanceStorageInfo,omitempty"`
	EbsInfo                      ebsInfo               `xml:"ebsInfo"`
	NetworkInfo                  networkInfo           `xml:"networkInfo"`
	GpuInfo                      *gpuInfo              `xml:"gpuInfo,omitempty"`
	NeuronInfo                   *neuronInfo           `xml:"neuronInfo,omitempty"`
	InferenceAcceleratorInfo     *inferenceAccelerator `xml:"inferenceAcceleratorInfo,omitempty"`
	BurstablePerformanceSupport  bool                  `xml:"burstablePerformanceSupported"`
	HibernationSupported         bool                  `xml:"hibernationSupported"`
	FreeTierEligible             bool                  `xml:"freeTierEligible"`
	SupportedInRegion            bool                  `xml:"supportedInRegion"`
}

type processorInfo struct {
	SupportedArchitectures []string `xml:"supportedArchitectures>item"`
	Manufacturer           string   `xml:"manufacturer,omitempty"`
}

type vcpuInfo struct {
	DefaultVCpus          int `xml:"defaultVCpus"`
	DefaultCores          int `xml:"defaultCores,omitempty"`
	DefaultThreadsPerCore int `xml:"defaultThreadsPerCore,omitempty"`
}

type sizeInMiB struct {
	SizeInMiB int64 `xml:"sizeInMiB"`
}

type instanceStorageInfo struct {
	TotalSizeInGB int64  `xml:"totalSizeInGB"`
	NvmeSupport   string `xml:"nvmeSupport"`
}

type ebsInfo struct {
	EbsOptimizedSupport string            `xml:"ebsOptimizedSupport"`
	EncryptionSupport   string            `xml:"encryptionSupport"`
	NvmeSupport         string            `xml:"nvmeSupport"`
	EbsOptimizedInfo    *ebsOptimizedInfo `xml:"ebsOptimizedInfo,omitempty"`
}

type ebsOptimizedInfo struct {
	BaselineBandwidthInMbps int64 `xml:"baselineBandwidthInMbps"`
	MaximumBandwidthInMbps  int64 `xml:"maximumBandwidthInMbps"`
}

type networkInfo struct {
	NetworkPerformance           string        `xml:"networkPerformance"`
	MaximumNetworkInterfaces     int           `xml:"maximumNetworkInterfaces"`
	MaximumNetworkCards          int           `xml:"maximumNetworkCards"`
	DefaultNetworkCardIndex      int           `xml:"defaultNetworkCardIndex"`
	NetworkCards                 []networkCard `xml:"networkCards>item"`
	Ipv4AddressesPerInterface    int           `xml:"ipv4AddressesPerInterface"`
	Ipv6AddressesPerInterface    int           `xml:"ipv6AddressesPerInterface"`
	Ipv6Supported                bool          `xml:"ipv6Supported"`
	EnaSupport                   string        `xml:"enaSupport"`
	EfaSupported                 bool          `xml:"efaSupported"`
	EfaInfo                      *efaInfo      `xml:"efaInfo,omitempty"`
	EncryptionInTransitSupported bool          `xml:"encryptionInTransitSupported"`
}

type networkCard struct {
	NetworkCardIndex         int     `xml:"networkCardIndex"`
	NetworkPerformance       string  `xml:"networkPerformance"`
	MaximumNetworkInterfaces int     `xml:"maximumNetworkInterfaces"`
	BaselineBandwidthInGbps  float64 `xml:"baselineBandwidthInGbps"`
	PeakBandwidthInGbps      float64 `xml:"peakBandwidthInGbps"`
}

type efaInfo struct {
	MaximumEfaInterfaces int `xml:"maximumEfaInterfaces"`
}

type gpuInfo struct {
	Gpus                []gpuDevice `xml:"gpus>item"`
	TotalGpuMemoryInMiB int64       `xml:"totalGpuMemoryInMiB"`
}

type gpuDevice struct {
	Name         string    `xml:"name"`
	Manufacturer string    `xml:"manufacturer"`
	Count        int       `xml:"count"`
	MemoryInfo   sizeInMiB `xml:"memoryInfo"`
}

type neuronInfo struct {
	NeuronDevices                []neuronDevice `xml:"neuronDevices>item"`
	TotalNeuronDeviceMemoryInMiB int64          `xml:"totalNeuronDeviceMemoryInMiB"`
}

type neuronDevice struct {
	Name       string    `xml:"name"`
	Count      int       `xml:"count"`
	CoreInfo   coreInfo  `xml:"coreInfo"`
	MemoryInfo sizeInMiB `xml:"memoryInfo"`
}

type coreInfo struct {
	Count   int `xml:"count"`
	Version int `xml:"version"`
}

type inferenceAccelerator struct {
	Accelerators              []acceleratorDevice `xml:"accelerators>item"`
	TotalInferenceMemoryInMiB int64               `xml:"totalInferenceMemoryInMiB"`
}

type acceleratorDevice struct {
	Name         string    `xml:"name"`
	Manufacturer string    `xml:"manufacturer"`
	Count        int       `xml:"count"`
	MemoryInfo   sizeInMiB `xml:"memoryInfo"`
}

// typeInfo describes a catalog type as DescribeInstanceTypes does.
func typeInfo(it *catalog.InstanceType) instanceTypeInfo {
	sh := &it.Shape
	x := instanceTypeInfo{
		InstanceType: it.Name, CurrentGeneration: true, BareMetal: sh.BareMetal, Hypervisor: sh.Hypervisor,
		SupportedRootDeviceTypes:     []string{"ebs"},
		SupportedVirtualizationTypes: []string{"hvm"},
		ProcessorInfo:                processorInfo{SupportedArchitectures: []string{ec2Arch(sh.Arch)}, Manufacturer: titleManufacturer(sh.CPUManufacturer)},
		VCPUInfo:                     vcpuInfo{DefaultVCpus: sh.VCPU},
		MemoryInfo:                   sizeInMiB{SizeInMiB: sh.MemoryMiB},
		EbsInfo:                      ebsInfo{EbsOptimizedSupport: "default", EncryptionSupport: "supported", NvmeSupport: "required"},
		BurstablePerformanceSupport:  sh.Family != "" && (sh.Family[0] == 't'),
		SupportedInRegion:            true,
	}
	if sh.Hypervisor == "xen" {
		x.EbsInfo.NvmeSupport = "unsupported"
	}
	if sh.Arch == "arm64" || sh.VCPU < 2 {
		x.VCPUInfo.DefaultCores, x.VCPUInfo.DefaultThreadsPerCore = sh.VCPU, 1
	} else {
		x.VCPUInfo.DefaultCores, x.VCPUInfo.DefaultThreadsPerCore = sh.VCPU/2, 2
	}
	usage := []string{}
	seen := map[string]bool{}
	for _, o := range it.Offerings {
		if o.CapacityType == apisv1.CapacityTypeReserved || seen[o.CapacityType] {
			continue
		}
		seen[o.CapacityType] = true
		usage = append(usage, o.CapacityType)
	}
	x.SupportedUsageClasses = usage
	if sh.LocalNVMeGB > 0 {
		x.InstanceStorageSupported = true
		x.InstanceStorageInfo = &instanceStorageInfo{TotalSizeInGB: sh.LocalNVMeGB, NvmeSupport: "required"}
	}
	if sh.EBSBandwidthMbps > 0 {
		x.EbsInfo.EbsOptimizedInfo = &ebsOptimizedInfo{BaselineBandwidthInMbps: sh.EBSBandwidthMbps, MaximumBandwidthInMbps: sh.EBSBandwidthMbps}
	}
	perf := networkPerformance(sh.NetworkGbps)
	enis, ipv4, cards := networkLimits(sh)
	x.NetworkInfo = networkInfo{
		NetworkPerformance: perf, MaximumNetworkInterfaces: enis, MaximumNetworkCards: len(cards),
		NetworkCards:              cards,
		Ipv4AddressesPerInterface: ipv4, Ipv6AddressesPerInterface: ipv4, Ipv6Supported: sh.Hypervisor == "nitro" || sh.BareMetal,
		EnaSupport: "required", EncryptionInTransitSupported: sh.Hypervisor == "nitro",
	}
	if sh.EFA > 0 {
		x.NetworkInfo.EfaSupported = true
		x.NetworkInfo.EfaInfo = &efaInfo{MaximumEfaInterfaces: sh.EFA}
	}
	if sh.GPUCount > 0 {
		x.GpuInfo = &gpuInfo{
			Gpus:                []gpuDevice{{Name: sh.GPUName, Manufacturer: titleManufacturer(sh.GPUManufacturer), Count: sh.GPUCount, MemoryInfo: sizeInMiB{SizeInMiB: sh.GPUMemoryMiB}}},
			TotalGpuMemoryInMiB: int64(sh.GPUCount) * sh.GPUMemoryMiB,
		}
	}
	switch {
	case sh.IsNeuron():
		cores := 0
		if sh.AcceleratorCount > 0 {
			cores = sh.NeuronCores / sh.AcceleratorCount
		}
		x.NeuronInfo = &neuronInfo{
			NeuronDevices:                []neuronDevice{{Name: sh.AcceleratorName, Count: sh.AcceleratorCount, CoreInfo: coreInfo{Count: cores, Version: neuronCoreVersion(sh.AcceleratorName)}, MemoryInfo: sizeInMiB{SizeInMiB: sh.AcceleratorMemoryMiB}}},
			TotalNeuronDeviceMemoryInMiB: int64(sh.AcceleratorCount) * sh.AcceleratorMemoryMiB,
		}
	case sh.AcceleratorCount > 0:
		x.InferenceAcceleratorInfo = &inferenceAccelerator{
			Accelerators:              []acceleratorDevice{{Name: sh.AcceleratorName, Manufacturer: titleManufacturer(sh.AcceleratorManufacturer), Count: sh.AcceleratorCount, MemoryInfo: sizeInMiB{SizeInMiB: sh.AcceleratorMemoryMiB}}},
			TotalInferenceMemoryInMiB: int64(sh.AcceleratorCount) * sh.AcceleratorMemoryMiB,
		}
	}
	return x
}

// neuronCoreVersion is the NeuronCore generation of a Neuron device: v1 in Inferentia, v2 in
// Inferentia2 and Trainium, v3 in Trainium2.
func neuronCoreVersion(device string) int {
	switch device {
	case "inferentia":
		return 1
	case "trainium2":
		return 3
	}
	return 2
}

// networkPerformance phrases a bandwidth as EC2's networkPerformance does.
func networkPerformance(gbps float64) string {
	switch {
	case gbps <= 0:
		return "Unknown"
	case gbps < 1:
		return "Low to Moderate"
	}
	return strconv.FormatFloat(gbps, 'f', -1, 64) + " Gigabit"
}

type describeInstanceTypesResponse struct {
	XMLName struct{} `xml:"DescribeInstanceTypesResponse"`
	ec2Header
	InstanceTypes []instanceTypeInfo `xml:"instanceTypeSet>item"`
	NextToken     string             `xml:"nextToken,omitempty"`
}

func (s *Server) describeInstanceTypes(f form) (ec2Response, *apiError) {
	names, filters := f.strs("InstanceType"), parseFilters(f)
	for _, n := range names {
		if _, ok := s.opts.Catalog.Get(n); !ok {
			return nil, badRequest("InvalidInstanceType", "The following supplied instance types do not exist: [%s]", n)
		}
	}
	var all []instanceTypeInfo
	for i := range s.typeInfos {
		x := &s.typeInfos[i]
		if len(names) > 0 && !contains(names, x.InstanceType) {
			continue
		}
		ok, err := matchFilters(filters, nil, func(name string) ([]string, bool) {
			switch name {
			case "instance-type":
				return []string{x.InstanceType}, true
			case "processor-info.supported-architecture":
				return x.ProcessorInfo.SupportedArchitectures, true
			case "supported-virtualization-type":
				return x.SupportedVirtualizationTypes, true
			case "supported-usage-class":
				return x.SupportedUsageClasses, true
			case "supported-root-device-type":
				return x.SupportedRootDeviceTypes, true
			case "current-generation":
				return []string{boolString(x.CurrentGeneration)}, true
			case "bare-metal":
				return []string{boolString(x.BareMetal)}, true
			case "hypervisor":
				return []string{x.Hypervisor}, true
			case "instance-storage-supported":
				return []string{boolString(x.InstanceStorageSupported)}, true
			case "vcpu-info.default-vcpus":
				return []string{strconv.Itoa(x.VCPUInfo.DefaultVCpus)}, true
			case "memory-info.size-in-mib":
				return []string{strconv.FormatInt(x.MemoryInfo.SizeInMiB, 10)}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			all = append(all, *x)
		}
	}
	start, end, next, err := page(f, len(all), 5, 100)
	if err != nil {
		return nil, err
	}
	return &describeInstanceTypesResponse{InstanceTypes: all[start:end], NextToken: next}, nil
}

// --- DescribeInstanceTypeOfferings ---

type instanceTypeOffering struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

type describeInstanceTypeOfferingsResponse struct {
	XMLName struct{} `xml:"DescribeInstanceTypeOfferingsResponse"`
	ec2Header
	Offerings []instanceTypeOffering `xml:"instanceTypeOfferingSet>item"`
	NextToken string                 `xml:"nextToken,omitempty"`
}

func (s *Server) describeInstanceTypeOfferings(f form) (ec2Response, *apiError) {
	lt := f.get("LocationType")
	if lt == "" {
		lt = "region"
	}
	if lt != "region" && lt != "availability-zone" && lt != "availability-zone-id" {
		return nil, badRequest("InvalidParameterValue", "Value (%s) for parameter locationType is invalid.", lt)
	}
	filters := parseFilters(f)
	var all []instanceTypeOffering
	for _, it := range s.opts.Catalog.Types {
		var locs []string
		for _, o := range it.Offerings {
			if o.CapacityType == apisv1.CapacityTypeReserved {
				continue
			}
			loc := s.region
			switch lt {
			case "availability-zone":
				loc = o.Zone
			case "availability-zone-id":
				loc = o.ZoneID
			}
			if !contains(locs, loc) {
				locs = append(locs, loc)
			}
		}
		for _, loc := range locs {
			x := instanceTypeOffering{InstanceType: it.Name, LocationType: lt, Location: loc}
			ok, err := matchFilters(filters, nil, func(name string) ([]string, bool) {
				switch name {
				case "instance-type":
					return []string{x.InstanceType}, true
				case "location":
					return []string{x.Location}, true
				}
				return nil, false
			})
			if err != nil {
				return nil, err
			}
			if ok {
				all = append(all, x)
			}
		}
	}
	start, end, next, err := page(f, len(all), 5, 1000)
	if err != nil {
		return nil, err
	}
	return &describeInstanceTypeOfferingsResponse{Offerings: all[start:end], NextToken: next}, nil
}

// --- DescribeSpotPriceHistory ---

type spotPrice struct {
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId"`
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
}

type describeSpotPriceHistoryResponse struct {
	XMLName struct{} `xml:"DescribeSpotPriceHistoryResponse"`
	ec2Header
	Prices    []spotPrice `xml:"spotPriceHistorySet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

// linuxProduct is the product description of the catalog's (Linux) prices.
const linuxProduct = "Linux/UNIX"

func (s *Server) describeSpotPriceHistory(f form) (ec2Response, *apiError) {
	types, products, zone, filters := f.strs("InstanceType"), f.strs("ProductDescription"), f.get("AvailabilityZone"), parseFilters(f)
	if len(products) > 0 && !contains(products, linuxProduct) && !contains(products, linuxProduct+" (Amazon VPC)") {
		return &describeSpotPriceHistoryResponse{}, nil
	}
	stamp := isoTime(s.opts.Clock.Now().Truncate(time.Hour))
	var all []spotPrice
	for _, it := range s.opts.Catalog.Types {
		if len(types) > 0 && !contains(types, it.Name) {
			continue
		}
		for _, o := range it.Offerings {
			if o.CapacityType != apisv1.CapacityTypeSpot || (zone != "" && zone != o.Zone) {
				continue
			}
			price := o.Price
			if v, ok := s.spotOverrides[spotPair{it.Name, o.Zone}]; ok {
				price = v
			}
			x := spotPrice{AvailabilityZone: o.Zone, AvailabilityZoneID: o.ZoneID, InstanceType: it.Name, ProductDescription: linuxProduct, SpotPrice: fmt.Sprintf("%.6f", price), Timestamp: stamp}
			ok, err := matchFilters(filters, nil, func(name string) ([]string, bool) {
				switch name {
				case "instance-type":
					return []string{x.InstanceType}, true
				case "availability-zone":
					return []string{x.AvailabilityZone}, true
				case "product-description":
					return []string{x.ProductDescription, x.ProductDescription + " (Amazon VPC)"}, true
				case "spot-price":
					return []string{x.SpotPrice}, true
				}
				return nil, false
			})
			if err != nil {
				return nil, err
			}
			if ok {
				all = append(all, x)
			}
		}
	}
	start, end, next, err := page(f, len(all), 1, 1000)
	if err != nil {
		return nil, err
	}
	return &describeSpotPriceHistoryResponse{Prices: all[start:end], NextToken: next}, nil
}
