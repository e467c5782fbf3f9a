package manifest

import (
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	karpv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// MaxPods bounds the pods a Set may expand to: Kubernetes' documented limit for one cluster.
const MaxPods = 150000

// Object is one object read from the manifests.
type Object struct {
	Source Source
	// Object is a typed object (such as *appsv1.Deployment or *karpv1.NodePool) or, for kinds
	// this package does not model, an *unstructured.Unstructured.
	Object runtime.Object
}

// Set is the objects read from manifests, each as the API server would store it: namespaced
// objects of the modelled kinds have a namespace ("default" when none was given), generated
// names are filled in, objects without a uid get one derived from their kind, namespace and
// name, and kinds with an embedded CRD have their schema defaults applied. The typed slices
// hold the same pointers as Objects. Callers must not modify the objects.
type Set struct {
	// Objects holds every object in the order read: file order, then document order, then the
	// order of the items of a List.
	Objects []Object

	NodePools       []*karpv1.NodePool
	Namespaces      []*corev1.Namespace
	Nodes           []*corev1.Node
	PriorityClasses []*schedulingv1.PriorityClass
	// Commitments are the Savings Plans and Reserved Instances already bought
	// (tenon.sh/v1alpha1), validated by their CRD and by tenonv1alpha1.Validate.
	Commitments []*tenonv1alpha1.Commitment
	// PodGroups group pods (spec.schedulingGroup) for kube-scheduler's workload-aware
	// scheduling: a gang policy admits them together. Both versions are here as the beta one
	// (scheduling.k8s.io/v1beta1, Kubernetes 1.37).
	PodGroups            []*schedulingv1beta1.PodGroup
	PodDisruptionBudgets []*policyv1.PodDisruptionBudget
	// RuntimeClasses give the pods that name one their overhead and scheduling constraints, as
	// the RuntimeClass admission plugin does (see DefaultPod).
	RuntimeClasses []*nodev1.RuntimeClass
	// The storage objects that decide where pods with volumes may run.
	StorageClasses         []*storagev1.StorageClass
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	PersistentVolumes      []*corev1.PersistentVolume
	// The dynamic resource allocation objects pods' resourceClaims name (resource.k8s.io/v1).
	DeviceClasses          []*resourcev1.DeviceClass
	ResourceClaims         []*resourcev1.ResourceClaim
	ResourceClaimTemplates []*resourcev1.ResourceClaimTemplate
	ResourceSlices         []*resourcev1.ResourceSlice
	// DaemonSets are not expanded by Pods: their pods depend on the nodes. DaemonSetPod gives
	// the pod one of them would run on a node.
	DaemonSets []*appsv1.DaemonSet

	// The workloads Pods expands.
	BarePods     []*corev1.Pod
	Deployments  []*appsv1.Deployment
	ReplicaSets  []*appsv1.ReplicaSet
	StatefulSets []*appsv1.StatefulSet
	Jobs         []*batchv1.Job
	CronJobs     []*batchv1.CronJob

	// Other holds the objects of kinds this package does not model, such as Services or a
	// provider's NodeClass, for the caller to decode. Those with an embedded CRD (NodeClaim,
	// NodeOverlay, and any kind added to pkg/apis/crds other than NodePool and Commitment, which
	// are typed above) have been validated and defaulted.
	Other []*unstructured.Unstructured

	podCount int
}

// PodCount returns the number of pods Pods returns, without building them.
func (s *Set) PodCount() int { return s.podCount }

func (s *Set) add(src Source, obj runtime.Object) {
	s.Objects = append(s.Objects, Object{Source: src, Object: obj})
	switch o := obj.(type) {
	case *karpv1.NodePool:
		s.NodePools = append(s.NodePools, o)
	case *tenonv1alpha1.Commitment:
		s.Commitments = append(s.Commitments, o)
	case *corev1.Namespace:
		s.Namespaces = append(s.Namespaces, o)
	case *corev1.Node:
		s.Nodes = append(s.Nodes, o)
	case *schedulingv1.PriorityClass:
		s.PriorityClasses = append(s.PriorityClasses, o)
	case *schedulingv1beta1.PodGroup:
		s.PodGroups = append(s.PodGroups, o)
	case *schedulingv1alpha3.PodGroup:
		s.PodGroups = append(s.PodGroups, betaPodGroup(o))
	case *policyv1.PodDisruptionBudget:
		s.PodDisruptionBudgets = append(s.PodDisruptionBudgets, o)
	case *nodev1.RuntimeClass:
		s.RuntimeClasses = append(s.RuntimeClasses, o)
	case *storagev1.StorageClass:
		s.StorageClasses = append(s.StorageClasses, o)
	case *corev1.PersistentVolumeClaim:
		s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, o)
	case *corev1.PersistentVolume:
		s.PersistentVolumes = append(s.PersistentVolumes, o)
	case *resourcev1.DeviceClass:
		s.DeviceClasses = append(s.DeviceClasses, o)
	case *resourcev1.ResourceClaim:
		s.ResourceClaims = append(s.ResourceClaims, o)
	case *resourcev1.ResourceClaimTemplate:
		s.ResourceClaimTemplates = append(s.ResourceClaimTemplates, o)
	case *resourcev1.ResourceSlice:
		s.ResourceSlices = append(s.ResourceSlices, o)
	case *appsv1.DaemonSet:
		s.DaemonSets = append(s.DaemonSets, o)
	case *corev1.Pod:
		s.BarePods = append(s.BarePods, o)
	case *appsv1.Deployment:
		s.Deployments = append(s.Deployments, o)
	case *appsv1.ReplicaSet:
		s.ReplicaSets = append(s.ReplicaSets, o)
	case *appsv1.StatefulSet:
		s.StatefulSets = append(s.StatefulSets, o)
	case *batchv1.Job:
		s.Jobs = append(s.Jobs, o)
	case *batchv1.CronJob:
		s.CronJobs = append(s.CronJobs, o)
	case *unstructured.Unstructured:
		s.Other = append(s.Other, o)
	}
	s.podCount += podCount(obj)
}
