package scheduling

import (
	"fmt"
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

func quantityValue(slot int, q resource.Quantity) int64 {
	if slot == CPU {
		return q.MilliValue()
	}
	return q.Value()
}

// FromResourceList converts a ResourceList, interning extended resources as needed.
func FromResourceList(list corev1.ResourceList) (Resources, error) {
	var r Resources
	for name, q := range list {
		i, err := InternResource(name)
		if err != nil {
			return Resources{}, err
		}
		r[i] = quantityValue(i, q)
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

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	for i := range r {
		r[i] += o[i]
	}
	return r
}

// Sub returns r − o.
func (r Resources) Sub(o Resources) Resources {
	for i := range r {
		r[i] -= o[i]
	}
	return r
}

// Scale returns r × n.
func (r Resources) Scale(n int64) Resources {
	for i := range r {
		r[i] *= n
	}
	return r
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

// PodRequests returns what a pod asks a node for, computed as the kubelet and kube-scheduler do:
// the larger of the sum of its containers (with restartable init containers, "sidecars") and the
// peak of its init sequence, pod-level resources where set, plus its overhead, plus one pod.
func PodRequests(pod *corev1.Pod) (Resources, error) {
	var requests corev1.ResourceList
	if len(pod.Spec.Containers) == 1 && len(pod.Spec.InitContainers) == 0 && pod.Spec.Overhead == nil && pod.Spec.Resources == nil {
		// One container and nothing else: its requests are the pod's, without the general
		// computation's copies.
		requests = pod.Spec.Containers[0].Resources.Requests
	} else {
		requests = resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	}
	r, err := FromResourceList(requests)
	if err != nil {
		return Resources{}, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	r[Pods]++
	return r, nil
}
