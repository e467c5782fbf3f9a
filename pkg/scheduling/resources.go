package scheduling

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Resource names beyond the core ones that tenon knows by heart.
const (
	ResourceNvidiaGPU  corev1.ResourceName = "nvidia.com/gpu"
	ResourceAMDGPU     corev1.ResourceName = "amd.com/gpu"
	ResourceNeuron     corev1.ResourceName = "aws.amazon.com/neuron"
	ResourceNeuronCore corev1.ResourceName = "aws.amazon.com/neuroncore"
	ResourceEFA        corev1.ResourceName = "vpc.amazonaws.com/efa"
)

// Slots of the fixed resources in a Resources vector.
const (
	CPU              = iota // millicores
	Memory                  // bytes
	Pods                    // count
	EphemeralStorage        // bytes
	NvidiaGPU
	AMDGPU
	Neuron
	NeuronCore
	EFA
	numFixed
)

// NumResources is the size of a Resources vector: the fixed slots plus room for extended
// resources interned at run time.
const NumResources = 16

// Resources is an amount of every resource tenon schedules, as a fixed-size integer vector: CPU
// in millicores, memory and storage in bytes, everything else in units. Arithmetic on it
// allocates nothing.
type Resources [NumResources]int64

var registry = struct {
	sync.RWMutex
	names [NumResources]corev1.ResourceName
	n     int
}{
	names: [NumResources]corev1.ResourceName{
		CPU: corev1.ResourceCPU, Memory: corev1.ResourceMemory, Pods: corev1.ResourcePods,
		EphemeralStorage: corev1.ResourceEphemeralStorage, NvidiaGPU: ResourceNvidiaGPU,
		AMDGPU: ResourceAMDGPU, Neuron: ResourceNeuron, NeuronCore: ResourceNeuronCore, EFA: ResourceEFA,
	},
	n: numFixed,
}

// ResourceIndex returns the slot of a resource name, if it has one.
func ResourceIndex(name corev1.ResourceName) (int, bool) {
	registry.RLock()
	defer registry.RUnlock()
	for i := 0; i < registry.n; i++ {
		if registry.names[i] == name {
			return i, true
		}
	}
	return 0, false
}

// InternResource returns the slot of a resource name, giving it one if it has none. It fails
// once every slot is taken.
func InternResource(name corev1.ResourceName) (int, error) {
	if i, ok := ResourceIndex(name); ok {
		return i, nil
	}
	registry.Lock()
	defer registry.Unlock()
	for i := 0; i < registry.n; i++ {
		if registry.names[i] == name {
			return i, nil
		}
	}
	if registry.n == NumResources {
		return 0, fmt.Errorf("resource %q: tenon tracks at most %d distinct resources", name, NumResources)
	}
	registry.names[registry.n] = name
	registry.n++
	return registry.n - 1, nil
}

// ResourceNameAt returns the name of slot i ("" when the slot is unused).
func ResourceNameAt(i int) corev1.ResourceName {
	registry.RLock()
	defer registry.RUnlock()
	return registry.names[i]
}

// Saturated is the amount that stands for "more than an int64 can count": a quantity too large
// for its slot converts to it, and sums and products that overflow stop at it. No instance type
// has that much of anything, so a saturated request is one no node can hold.
const Saturated int64 = math.MaxInt64

// maxCores is the CPU quantity, in cores, from which on millicores saturate.
const maxCores = math.MaxInt64 / 1000

// Amount converts a quantity to the integer unit of slot: millicores for CPU, rounded up as
// kube-scheduler does; units (bytes, counts) for every other slot, rounded up. A quantity beyond
// what an int64 can hold (from 2^63−1 units, or 2^63/1000 cores, on) converts to Saturated (exact reports false), never to a wrapped
// value. A negative quantity is an error: nothing requests or offers less than nothing.
//
// It is the one place where a resource.Quantity becomes one of the core's integers; every
// driver's conversion goes through it.
func Amount(slot int, q resource.Quantity) (v int64, exact bool, err error) {
	if q.Sign() < 0 {
		return 0, false, fmt.Errorf("negative amount %s", q.String())
	}
	limit := int64(math.MaxInt64)
	if slot == CPU {
		limit = maxCores
	}
	// The parser itself clamps binary-suffixed amounts (8Ei and up) to the int64 maximum, so
	// reaching the limit counts as beyond it.
	if q.CmpInt64(limit) >= 0 {
		return Saturated, false, nil
	}
	if slot == CPU {
		return q.MilliValue(), true, nil
	}
	return q.Value(), true, nil
}

// FromResourceList converts a ResourceList, interning extended resources as needed. Amounts too
// large for an int64 saturate (see Amount); a negative amount or one resource too many is an
// error naming the resource.
func FromResourceList(list corev1.ResourceList) (Resources, error) {
	var r Resources
	for name, q := range list {
		i, err := InternResource(name)
		if err != nil {
			return Resources{}, err
		}
		if r[i], _, err = Amount(i, q); err != nil {
			return Resources{}, fmt.Errorf("resource %s: %w", name, err)
		}
	}
	return r, nil
}

// MustFromResourceList is FromResourceList for lists known to fit; it panics otherwise.
func MustFromResourceList(list corev1.ResourceList) Resources {
	r, err := FromResourceList(list)
	if err != nil {
		panic(err)
	}
	return r
}

// ResourceList converts r back, leaving out zero amounts.
func (r Resources) ResourceList() corev1.ResourceList {
	out := corev1.ResourceList{}
	for i, v := range r {
		if v == 0 {
			continue
		}
		name := ResourceNameAt(i)
		switch i {
		case CPU:
			out[name] = *resource.NewMilliQuantity(v, resource.DecimalSI)
		case Memory, EphemeralStorage:
			out[name] = *resource.NewQuantity(v, resource.BinarySI)
		default:
			out[name] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return out
}

// Add returns r + o, each amount stopping at Saturated (or at the int64 minimum) instead of
// wrapping.
func (r Resources) Add(o Resources) Resources {
	for i := range r {
		r[i] = SatAdd(r[i], o[i])
	}
	return r
}

// Sub returns r − o, saturating as Add does.
func (r Resources) Sub(o Resources) Resources {
	for i := range r {
		r[i] = SatSub(r[i], o[i])
	}
	return r
}

// Scale returns r × n, saturating as Add does.
func (r Resources) Scale(n int64) Resources {
	for i := range r {
		r[i] = SatMul(r[i], n)
	}
	return r
}

// SatAdd is a + b, clamped to the int64 range instead of wrapping.
func SatAdd(a, b int64) int64 {
	s := a + b
	if (s^a)&(s^b) < 0 { // both operands have the sign the sum lost
		if a < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return s
}

// SatSub is a − b, clamped to the int64 range instead of wrapping.
func SatSub(a, b int64) int64 {
	s := a - b
	if (a^b)&(a^s) < 0 { // operands of different signs, and the result took b's
		if a < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return s
}

// SatMul is a × b, clamped to the int64 range instead of wrapping.
func SatMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uabs(a), uabs(b))
	if (a < 0) != (b < 0) {
		if hi != 0 || lo >= 1<<63 {
			return math.MinInt64
		}
		return -int64(lo)
	}
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// uabs is |a|, exact for the int64 minimum too.
func uabs(a int64) uint64 {
	if a < 0 {
		return uint64(^a) + 1
	}
	return uint64(a)
}

// Max returns the element-wise maximum of r and o.
func (r Resources) Max(o Resources) Resources {
	for i := range r {
		r[i] = max(r[i], o[i])
	}
	return r
}

// Fits reports whether r fits within capacity in every resource.
func (r *Resources) Fits(capacity *Resources) bool {
	for i := range r {
		if r[i] > capacity[i] {
			return false
		}
	}
	return true
}

// FitsIn is Fits for values.
func (r Resources) FitsIn(capacity Resources) bool { return r.Fits(&capacity) }

// Exceeding returns the first resource slot in which r exceeds capacity, or -1.
func (r Resources) Exceeding(capacity Resources) int {
	for i := range r {
		if r[i] > capacity[i] {
			return i
		}
	}
	return -1
}

// IsZero reports whether every amount is zero.
func (r Resources) IsZero() bool { return r == Resources{} }

// String formats the non-zero amounts, e.g. "cpu=1500m memory=2Gi pods=3".
func (r Resources) String() string {
	var parts []string
	for i, v := range r {
		if v == 0 {
			continue
		}
		name := ResourceNameAt(i)
		switch {
		case v == Saturated:
			// Beyond what tenon counts: the request was larger than any int64.
			parts = append(parts, fmt.Sprintf("%s=%s", name, saturatedText(i)))
			continue
		}
		switch i {
		case CPU:
			parts = append(parts, fmt.Sprintf("%s=%s", name, resource.NewMilliQuantity(v, resource.DecimalSI)))
		case Memory, EphemeralStorage:
			parts = append(parts, fmt.Sprintf("%s=%s", name, resource.NewQuantity(v, resource.BinarySI)))
		default:
			parts = append(parts, fmt.Sprintf("%s=%d", name, v))
		}
	}
	return strings.Join(parts, " ")
}

// saturatedText describes a saturated amount of slot i.
func saturatedText(i int) string {
	if i == CPU {
		return fmt.Sprintf(">%d", int64(maxCores))
	}
	return fmt.Sprintf(">%d", Saturated)
}

// PodRequests returns what a pod asks a node for, computed as the kubelet and kube-scheduler do:
// the larger of the sum of its containers (with restartable init containers, "sidecars") and the
// peak of its init sequence, pod-level resources where set, plus its overhead, plus one pod.
//
// The sums are exact (resource.Quantity arithmetic does not overflow); only the result is
// converted, so a total beyond an int64 saturates (see Amount) instead of wrapping.
func PodRequests(pod *corev1.Pod) (Resources, error) {
	r, err := FromResourceList(podRequestList(pod))
	if err != nil {
		return Resources{}, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	r[Pods] = SatAdd(r[Pods], 1)
	return r, nil
}

// podRequestList is a pod's requests as a ResourceList, as PodRequests computes them.
func podRequestList(pod *corev1.Pod) corev1.ResourceList {
	if len(pod.Spec.Containers) == 1 && len(pod.Spec.InitContainers) == 0 && pod.Spec.Overhead == nil && pod.Spec.Resources == nil {
		// One container and nothing else: its requests are the pod's, without the general
		// computation's copies.
		return pod.Spec.Containers[0].Resources.Requests
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// FormatPodRequests formats r, the PodRequests of pod, as String does, except that an amount
// that saturated is shown as the pod's own total (cpu=1e16), not as the int64 it was clipped to.
func FormatPodRequests(r Resources, pod *corev1.Pod) string {
	var list corev1.ResourceList
	parts := strings.Fields(r.String())
	for i, v := range r {
		if v != Saturated {
			continue
		}
		if list == nil {
			list = podRequestList(pod)
		}
		name := ResourceNameAt(i)
		q, ok := list[name]
		if !ok {
			continue
		}
		prefix := string(name) + "="
		for j, part := range parts {
			if strings.HasPrefix(part, prefix) {
				parts[j] = prefix + q.String()
			}
		}
	}
	return strings.Join(parts, " ")
}
