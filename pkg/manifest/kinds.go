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
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kind is what the loader knows of one modelled kind.
type kind struct {
	namespaced bool
	// name checks metadata.name (or generateName) as the API server does for the kind.
	name apivalidation.ValidateNameFunc
	new  func() runtime.Object
	// check returns the errors of the object beyond its metadata.
	check func(runtime.Object) field.ErrorList
}

// kinds are the modelled kinds other than those with an embedded CRD.
var kinds = map[schema.GroupVersionKind]kind{
	corev1.SchemeGroupVersion.WithKind("Pod"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &corev1.Pod{} },
		func(o runtime.Object) field.ErrorList { return checkPod(o.(*corev1.Pod)) }},
	corev1.SchemeGroupVersion.WithKind("Node"): {false, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &corev1.Node{} }, noCheck},
	corev1.SchemeGroupVersion.WithKind("Namespace"): {false, apivalidation.ValidateNamespaceName,
		func() runtime.Object { return &corev1.Namespace{} }, noCheck},
	appsv1.SchemeGroupVersion.WithKind("Deployment"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &appsv1.Deployment{} },
		func(o runtime.Object) field.ErrorList { return checkDeployment(o.(*appsv1.Deployment)) }},
	appsv1.SchemeGroupVersion.WithKind("ReplicaSet"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &appsv1.ReplicaSet{} },
		func(o runtime.Object) field.ErrorList { return checkReplicaSet(o.(*appsv1.ReplicaSet)) }},
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"): {true, apivalidation.NameIsDNSLabel,
		func() runtime.Object { return &appsv1.StatefulSet{} },
		func(o runtime.Object) field.ErrorList { return checkStatefulSet(o.(*appsv1.StatefulSet)) }},
	appsv1.SchemeGroupVersion.WithKind("DaemonSet"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &appsv1.DaemonSet{} },
		func(o runtime.Object) field.ErrorList { return checkDaemonSet(o.(*appsv1.DaemonSet)) }},
	batchv1.SchemeGroupVersion.WithKind("Job"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &batchv1.Job{} },
		func(o runtime.Object) field.ErrorList {
			j := o.(*batchv1.Job)
			return checkJobSpec(&j.Spec, field.NewPath("spec"))
		}},
	batchv1.SchemeGroupVersion.WithKind("CronJob"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &batchv1.CronJob{} },
		func(o runtime.Object) field.ErrorList { return checkCronJob(o.(*batchv1.CronJob)) }},
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
		func(o runtime.Object) field.ErrorList {
			return checkPodDisruptionBudget(o.(*policyv1.PodDisruptionBudget))
		}},
	schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"): {false, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &schedulingv1.PriorityClass{} },
		func(o runtime.Object) field.ErrorList { return checkPriorityClass(o.(*schedulingv1.PriorityClass)) }},
	storagev1.SchemeGroupVersion.WithKind("StorageClass"): {false, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &storagev1.StorageClass{} },
		func(o runtime.Object) field.ErrorList { return checkStorageClass(o.(*storagev1.StorageClass)) }},
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &corev1.PersistentVolumeClaim{} }, noCheck},
	corev1.SchemeGroupVersion.WithKind("PersistentVolume"): {false, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &corev1.PersistentVolume{} }, noCheck},
	schedulingv1beta1.SchemeGroupVersion.WithKind("PodGroup"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &schedulingv1beta1.PodGroup{} },
		func(o runtime.Object) field.ErrorList { return checkPodGroup(o.(*schedulingv1beta1.PodGroup)) }},
	// The alpha version (Kubernetes 1.35–1.36) has the same fields; it is read as the beta one.
	schedulingv1alpha3.SchemeGroupVersion.WithKind("PodGroup"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &schedulingv1alpha3.PodGroup{} },
		func(o runtime.Object) field.ErrorList {
			return checkPodGroup(betaPodGroup(o.(*schedulingv1alpha3.PodGroup)))
		}},
	// Dynamic resource allocation: what pods' resourceClaims name (pkg/dra resolves them).
	resourcev1.SchemeGroupVersion.WithKind("DeviceClass"): {false, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &resourcev1.DeviceClass{} }, noCheck},
	resourcev1.SchemeGroupVersion.WithKind("ResourceClaim"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &resourcev1.ResourceClaim{} }, noCheck},
	resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate"): {true, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} }, noCheck},
	resourcev1.SchemeGroupVersion.WithKind("ResourceSlice"): {false, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &resourcev1.ResourceSlice{} }, noCheck},
	nodev1.SchemeGroupVersion.WithKind("RuntimeClass"): {false, apivalidation.NameIsDNSSubdomain,
		func() runtime.Object { return &nodev1.RuntimeClass{} },
		func(o runtime.Object) field.ErrorList { return checkRuntimeClass(o.(*nodev1.RuntimeClass)) }},
}

func noCheck(runtime.Object) field.ErrorList { return nil }

// nodePoolKind is decoded into a typed NodePool after its CRD has validated it.
var nodePoolKind = karpv1.SchemeGroupVersion.WithKind(karpv1.NodePoolKind)

// commitmentKind is decoded into a typed Commitment after its CRD has validated it, and then
// checked by tenonv1alpha1.Validate, which refuses what no CRD marker expresses.
var commitmentKind = tenonv1alpha1.SchemeGroupVersion.WithKind(tenonv1alpha1.CommitmentKind)

// knownGroupKind reports whether a group and kind is modelled in some version, so that another
// version is a mistake (apps/v1beta1 Deployment) rather than a kind to pass through.
func knownGroupKind(gk schema.GroupKind) bool {
	for gvk := range kinds {
		if gvk.GroupKind() == gk {
			return true
		}
	}
	return false
}

// betaPodGroup is an alpha PodGroup as the beta one: the fields tenon reads (the scheduling
// policy, the topology constraint, the disruption mode) are the same in both versions.
func betaPodGroup(a *schedulingv1alpha3.PodGroup) *schedulingv1beta1.PodGroup {
	b := &schedulingv1beta1.PodGroup{ObjectMeta: a.ObjectMeta}
	b.APIVersion, b.Kind = schedulingv1beta1.SchemeGroupVersion.String(), "PodGroup"
	if a.Spec.SchedulingPolicy.Basic != nil {
		b.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	}
	if g := a.Spec.SchedulingPolicy.Gang; g != nil {
		b.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: g.MinCount}
	}
	if m := a.Spec.DisruptionMode; m != nil {
		b.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{}
		if m.Single != nil {
			b.Spec.DisruptionMode.Single = &schedulingv1beta1.SingleDisruptionMode{}
		}
		if m.All != nil {
			b.Spec.DisruptionMode.All = &schedulingv1beta1.AllDisruptionMode{}
		}
	}
	if c := a.Spec.SchedulingConstraints; c != nil {
		b.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{}
		for _, t := range c.Topology {
			b.Spec.SchedulingConstraints.Topology = append(b.Spec.SchedulingConstraints.Topology, schedulingv1beta1.TopologyConstraint{Key: t.Key})
		}
	}
	return b
}
