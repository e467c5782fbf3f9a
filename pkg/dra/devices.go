package dra

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// DriverNVIDIA is the driver name under which NVIDIA's DRA driver publishes GPUs.
const DriverNVIDIA = "gpu.nvidia.com"

// gpuModel is what NVIDIA's DRA driver publishes of one GPU model, besides its memory.
type gpuModel struct {
	productName, architecture, computeCapability string
}

// nvidiaModels maps the catalog's GPU names (gpu_name in ../shared/data/aws) to the attributes
// NVIDIA's DRA driver publishes for them: productName as NVML reports it, architecture, and
// cudaComputeCapability as a semantic version. A name with two memory sizes names its models by
// memory (nvidiaModel). Provenance: productName, architecture and cudaComputeCapability of
// t4, a10g, l4, l40s, v100 (32 GB), a100 (40 GB), h100 and h200 are as the AWS provider's scraped
// DRA metadata of EC2 GPU instances records them (aws/karpenter-provider-aws, drametadata); the
// rest (t4g, v100 16 GB, a100 80 GB, b200) follow NVML's naming of the same families and NVIDIA's
// published compute capabilities. GPUs whose names are not here (k80 and m60, which current
// drivers no longer support; b300, rtx-pro-4500, rtx-pro-server-6000, whose published names were
// not at hand) and other makers' accelerators publish no DRA devices in tenon's model: a claim
// cannot be served on them.
var nvidiaModels = map[string]gpuModel{
	"t4":   {"Tesla T4", "Turing", "7.5.0"},
	"t4g":  {"NVIDIA T4G", "Turing", "7.5.0"},
	"a10g": {"NVIDIA A10G", "Ampere", "8.6.0"},
	"l4":   {"NVIDIA L4", "Ada Lovelace", "8.9.0"},
	"l40s": {"NVIDIA L40S", "Ada Lovelace", "8.9.0"},
	"v100": {"Tesla V100-SXM2-16GB", "Volta", "7.0.0"},
	"a100": {"NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0"},
	"h100": {"NVIDIA H100 80GB HBM3", "Hopper", "9.0.0"},
	"h200": {"NVIDIA H200", "Hopper", "9.0.0"},
	"b200": {"NVIDIA B200", "Blackwell", "10.0.0"},
}

// nvidiaModel returns the model of a catalog GPU by name and memory per device.
func nvidiaModel(name string, memoryMiB int64) (gpuModel, bool) {
	m, ok := nvidiaModels[name]
	switch {
	case name == "v100" && memoryMiB >= 32<<10:
		m.productName = "Tesla V100-SXM2-32GB"
	case name == "a100" && memoryMiB >= 80<<10:
		m.productName = "NVIDIA A100-SXM4-80GB"
	}
	return m, ok
}

// Devices are the devices of one kind a node of an instance type publishes: Count alike
// devices of Driver with Attributes and Capacity, counted by the scheduler's resources as
// Resource (a GPU taken through a claim is one the device plugin can no longer hand out).
type Devices struct {
	Driver     string
	Count      int64
	Resource   corev1.ResourceName
	Attributes map[resourcev1.QualifiedName]resourcev1.DeviceAttribute
	Capacity   map[resourcev1.QualifiedName]resourcev1.DeviceCapacity
	// model names the devices' kind and shape (driver, product and memory): types with the
	// same model publish the same devices, so a selector is evaluated once per model.
	model string
}

// DevicesOf returns the DRA devices a node of the instance type publishes, or false when it
// has none tenon models: one device per NVIDIA GPU, named and described as NVIDIA's driver does,
// or, on a type whose GPUs are in a MIG layout (catalog.PartitionGPUs), one device per MIG
// instance (type "mig", its profile and memory). A type with a fraction of a GPU (less than one
// device) has none.
func DevicesOf(it *catalog.InstanceType) (Devices, bool) {
	s := it.Shape
	if s.GPUManufacturer != "nvidia" || s.GPUCount < 1 {
		return Devices{}, false
	}
	m, ok := nvidiaModel(s.GPUName, s.GPUMemoryMiB)
	if !ok {
		return Devices{}, false
	}
	d := Devices{
		Driver:   DriverNVIDIA,
		Count:    int64(s.GPUCount),
		Resource: scheduling.ResourceNvidiaGPU,
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type":                  {StringValue: ptr.To("gpu")},
			"productName":           {StringValue: ptr.To(m.productName)},
			"brand":                 {StringValue: ptr.To("Nvidia")},
			"architecture":          {StringValue: ptr.To(m.architecture)},
			"cudaComputeCapability": {VersionValue: ptr.To(m.computeCapability)},
		},
	}
	memMiB := s.GPUMemoryMiB
	if mig := s.MIG; mig != nil {
		// A MIG instance names its profile; the rest is its parent GPU's.
		d.Count *= int64(mig.PerGPU)
		d.Resource = mig.Resource()
		d.Attributes["type"] = resourcev1.DeviceAttribute{StringValue: ptr.To("mig")}
		d.Attributes["profile"] = resourcev1.DeviceAttribute{StringValue: ptr.To(mig.Profile)}
		memMiB = mig.MemoryMiB
	}
	mem := resource.NewQuantity(memMiB<<20, resource.BinarySI)
	d.Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: *mem}}
	d.model = DriverNVIDIA + "/" + m.productName + "/" + mem.String()
	if s.MIG != nil {
		d.model += "/mig-" + s.MIG.Profile
	}
	return d, true
}

// DeviceNames returns the names under which a node's devices are published in its
// ResourceSlice: gpu-0, gpu-1, … for whole GPUs; gpu-<g>-mig-<profile>-<i> for the MIG
// instances of GPU g.
func DeviceNames(it *catalog.InstanceType, d Devices) []string {
	out := make([]string, 0, d.Count)
	if mig := it.Shape.MIG; mig != nil {
		profile := strings.ReplaceAll(mig.Profile, ".", "")
		for g := range it.Shape.GPUCount {
			for i := range mig.PerGPU {
				out = append(out, fmt.Sprintf("gpu-%d-mig-%s-%d", g, profile, i))
			}
		}
		return out
	}
	for i := range d.Count {
		out = append(out, fmt.Sprintf("gpu-%d", i))
	}
	return out
}

// ResourceOf returns the resource a published device is counted as: the MIG profile's for a
// MIG instance (attribute type "mig" with a profile), nvidia.com/gpu otherwise.
func ResourceOf(d *resourcev1.Device) corev1.ResourceName {
	t, p := d.Attributes["type"], d.Attributes["profile"]
	if t.StringValue != nil && *t.StringValue == "mig" && p.StringValue != nil {
		return corev1.ResourceName(catalog.MIGResourcePrefix + *p.StringValue)
	}
	return scheduling.ResourceNvidiaGPU
}
