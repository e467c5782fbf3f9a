package charts_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	apisv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
)

// The scenario's namespaces: workloads (emptied after every run) and pods whose volumes
// confine them to a zone that does not exist (kept: every run's provisioning and disruption
// read their claims, volumes and classes, and plan nothing for them).
const (
	workNamespace    = "work"
	volumesNamespace = "volumes"
)

// overlay is a NodeOverlay that changes no decision of the scenario (a device no pod asks for,
// on the GPU pool's types): with the gate on, its conditions are written.
func overlay() *apisv1alpha1.NodeOverlay {
	o := &apisv1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "scenario"}}
	o.Spec.Requirements = []apisv1alpha1.NodeSelectorRequirement{{Key: apisv1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu"}}}
	o.Spec.Capacity = corev1.ResourceList{"example.com/unused": resource.MustParse("1")}
	return o
}

// commitment is an EC2 Instance Savings Plan for a family no pool of the scenario launches, so
// it prices nothing the scenario buys: its status is written and no decision changes.
func commitment() *tenonv1alpha1.Commitment {
	c := &tenonv1alpha1.Commitment{ObjectMeta: metav1.ObjectMeta{Name: "scenario"}}
	c.Spec.EC2InstanceSavingsPlan = &tenonv1alpha1.EC2InstanceSavingsPlan{HourlyCommitment: "1.00", Family: "x2iedn", Region: "us-east-1", Discount: "30"}
	return c
}

// scenario is what tenon must get done as the ServiceAccount, one step after the other:
//  1. provisioning: pending pods become NodeClaims, the simulated provider's instances register
//     Nodes (kwok plays their kubelets), the pods run;
//  2. consolidation: after a scale-down an empty node is deleted, and an underutilized one is
//     replaced by a cheaper one (its pod evicted);
//  3. termination: a NodeClaim deleted by hand drains, a PodDisruptionBudget blocks the
//     eviction, and the pod is deleted when the NodePool's terminationGracePeriod runs out;
//  4. restart: a new operator takes over and adopts the running instances (the simulated
//     provider restores them from their SimInstances and SimNodeClass) without relaunching.
//
// A GPU pod runs throughout: its node's device resources appear late, as a device plugin
// adds them.
func (h *rbacHarness) scenario(ctx context.Context, t *testing.T, restart func() error) error {
	t.Helper()
	create := func(objs ...client.Object) error {
		for _, o := range objs {
			if err := h.admin.Create(ctx, o); err != nil {
				return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
			}
		}
		return nil
	}
	wide := pool("wide", func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: 3 * time.Second}
	})
	// The GPU pod asks for its GPU through a dynamic resource claim: tenon reads the claim, its
	// template and DeviceClass and the ResourceSlices nodes publish, and the simulated provider
	// publishes its GPU node's devices.
	gpu := workload("gpu", 1, "2", "gpu", false)
	gpu.Spec.Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: new("one-gpu")}}
	gpu.Spec.Template.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	gpuClass := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "gpu.nvidia.com"`,
		}}}},
	}
	oneGPU := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "one-gpu", Namespace: workNamespace},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"}}},
		}}},
	}
	if err := create(gpuClass, oneGPU, simNodeClass(), wide, pool("small"), pool("gpu", func(np *apisv1.NodePool) {
		np.Spec.Template.Spec.Requirements[0].Values = []string{"g5", "g6"}
	}),
		workload("spread", 2, "3", "wide", true), workload("filler", 1, "5", "small", false), workload("app", 1, "1500m", "small", false), gpu, overlay(), commitment()); err != nil {
		return err
	}

	// 1. Provisioning.
	var big string
	if err := h.eventually(ctx, "the pods Running on provisioned nodes", func() (bool, string) {
		running := map[string]string{}
		for _, app := range []string{"spread", "filler", "app", "gpu"} {
			for _, p := range h.pods(ctx, app) {
				if p.Status.Phase == corev1.PodRunning {
					running[app] += p.Spec.NodeName + " "
				}
			}
		}
		big = strings.TrimSpace(running["app"])
		return len(strings.Fields(running["spread"])) == 2 && running["filler"] != "" && big != "" && running["filler"] == running["app"] && running["gpu"] != "",
			fmt.Sprintf("running on %v; claims %s", running, h.claims(ctx))
	}); err != nil {
		return err
	}

	// 2. Consolidation: one spread node empty, the filler gone from the big node.
	if err := h.scale(ctx, "spread", 1); err != nil {
		return err
	}
	if err := h.scale(ctx, "filler", 0); err != nil {
		return err
	}
	if err := h.eventually(ctx, "the empty node deleted and the underutilized one replaced", func() (bool, string) {
		var wideClaims, smallClaims, gpuClaims int
		for _, c := range h.claimList(ctx) {
			if c.DeletionTimestamp != nil {
				return false, h.claims(ctx)
			}
			switch c.Labels[apisv1.NodePoolLabelKey] {
			case "wide":
				wideClaims++
			case "small":
				smallClaims++
			case "gpu":
				gpuClaims++
			}
		}
		node := &corev1.Node{}
		bigGone := apierrors.IsNotFound(h.admin.Get(ctx, types.NamespacedName{Name: big}, node))
		appRunning := false
		for _, p := range h.pods(ctx, "app") {
			appRunning = appRunning || (p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != big)
		}
		return wideClaims == 1 && smallClaims == 1 && gpuClaims == 1 && bigGone && appRunning, fmt.Sprintf("big node %s gone: %t, app moved: %t; claims %s", big, bigGone, appRunning, h.claims(ctx))
	}); err != nil {
		return err
	}

	// 3. A drain the grace period cuts short.
	if err := create(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: "spread"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(0)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}},
		},
	}); err != nil {
		return err
	}
	if err := h.eventually(ctx, "the PodDisruptionBudget computed", func() (bool, string) {
		pdb := &policyv1.PodDisruptionBudget{}
		if err := h.admin.Get(ctx, types.NamespacedName{Namespace: workNamespace, Name: "spread"}, pdb); err != nil {
			return false, err.Error()
		}
		return pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.ExpectedPods == 1, fmt.Sprintf("%+v", pdb.Status)
	}); err != nil {
		return err
	}
	var victim *apisv1.NodeClaim
	for _, c := range h.claimList(ctx) {
		if c.Labels[apisv1.NodePoolLabelKey] == "wide" {
			victim = &c
		}
	}
	if victim == nil {
		return fmt.Errorf("no wide NodeClaim left: %s", h.claims(ctx))
	}
	if err := h.admin.Delete(ctx, victim); err != nil {
		return err
	}
	if err := h.eventually(ctx, "the NodeClaim "+victim.Name+" terminated past its PodDisruptionBudget", func() (bool, string) {
		c := &apisv1.NodeClaim{}
		err := h.admin.Get(ctx, client.ObjectKeyFromObject(victim), c)
		return apierrors.IsNotFound(err), fmt.Sprintf("claims %s", h.claims(ctx))
	}); err != nil {
		return err
	}

	// 4. Restart: the new leader keeps the GPU and small claims it finds.
	kept := map[types.UID]string{}
	for _, c := range h.claimList(ctx) {
		if p := c.Labels[apisv1.NodePoolLabelKey]; p == "gpu" || p == "small" {
			kept[c.UID] = c.Name
		}
	}
	if err := restart(); err != nil {
		return err
	}
	if err := h.eventually(ctx, "the new operator leading", func() (bool, string) {
		l := &coordinationv1.Lease{}
		err := h.admin.Get(ctx, types.NamespacedName{Namespace: releaseNamespace, Name: "tenon-leader"}, l)
		return err == nil, fmt.Sprint(err)
	}); err != nil {
		return err
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		left := 0
		for _, c := range h.claimList(ctx) {
			if _, ok := kept[c.UID]; ok && c.DeletionTimestamp == nil {
				left++
			}
		}
		if left != len(kept) {
			return fmt.Errorf("the restarted operator let go of the claims %v: %s", kept, h.claims(ctx))
		}
	}
	return nil
}

// eventually polls cond until it holds, ctx ends (a denial stops the scenario) or two minutes
// pass.
func (h *rbacHarness) eventually(ctx context.Context, what string, cond func() (bool, string)) error {
	var msg string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		ok, m := cond()
		msg = m
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not happen: %s (%w)", what, msg, err)
	}
	return nil
}

func (h *rbacHarness) pods(ctx context.Context, app string) []corev1.Pod {
	var l corev1.PodList
	_ = h.admin.List(ctx, &l, client.InNamespace(workNamespace), client.MatchingLabels{"app": app})
	return l.Items
}

func (h *rbacHarness) claimList(ctx context.Context) []apisv1.NodeClaim {
	var l apisv1.NodeClaimList
	_ = h.admin.List(ctx, &l)
	return l.Items
}

// claims describes the NodeClaims for a failure message.
func (h *rbacHarness) claims(ctx context.Context) string {
	var s []string
	for _, c := range h.claimList(ctx) {
		var conds []string
		for _, cond := range c.Status.Conditions {
			if cond.Status == metav1.ConditionTrue {
				conds = append(conds, cond.Type)
			}
		}
		s = append(s, fmt.Sprintf("%s(%s %s [%s] deleting=%t)", c.Name, c.Labels[apisv1.NodePoolLabelKey], c.Labels[apisv1.LabelInstanceType], strings.Join(conds, ","), c.DeletionTimestamp != nil))
	}
	var nodes corev1.NodeList
	_ = h.admin.List(ctx, &nodes)
	for _, n := range nodes.Items {
		ready := "?"
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = string(c.Status)
			}
		}
		var taints []string
		for _, t := range n.Spec.Taints {
			taints = append(taints, t.Key)
		}
		gpus := n.Status.Allocatable["nvidia.com/gpu"]
		s = append(s, fmt.Sprintf("node %s(ready=%s taints=%v gpus=%s)", n.Name, ready, taints, gpus.String()))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func (h *rbacHarness) scale(ctx context.Context, name string, replicas int32) error {
	d := &appsv1.Deployment{}
	if err := h.admin.Get(ctx, types.NamespacedName{Namespace: workNamespace, Name: name}, d); err != nil {
		return err
	}
	orig := d.DeepCopy()
	d.Spec.Replicas = &replicas
	return h.admin.Patch(ctx, d, client.MergeFrom(orig))
}

// createVolumes makes the namespaces and the pods whose volumes no zone can hold: one claim
// of a StorageClass limited to a zone that does not exist, and one claim of a volume there.
func (h *rbacHarness) createVolumes(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	nowhere := []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"nowhere-1a"}}}
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	noClass := ""
	claim := func(name string, mutate func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: volumesNamespace, Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		mutate(c)
		return c
	}
	podWith := func(name, claimName string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: volumesNamespace, Name: name},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "example.com/" + name, Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				}}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}},
			},
		}
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: volumesNamespace}},
		&storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: "nowhere"}, Provisioner: "example.com/none", VolumeBindingMode: &wffc,
			AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelTopologyZone, Values: []string{"nowhere-1a"}}}}},
		},
		&corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "nowhere"},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/nowhere"}},
				NodeAffinity:           &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: nowhere}}}},
			},
		},
		claim("of-class", func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = new("nowhere") }),
		claim("of-volume", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.StorageClassName, c.Spec.VolumeName = &noClass, "nowhere"
		}),
		podWith("wants-class", "of-class"),
		podWith("wants-volume", "of-volume"),
	} {
		if err := h.admin.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// cleanup removes what a run made, so that the next run's operator starts on an empty
// cluster and has to make every request again: workloads, NodePools, NodeClaims, Nodes,
// SimInstances, the SimNodeClass, the NodeOverlay, the Commitment (finalizers stripped: no
// operator runs now), and the leader-election Lease.
func (h *rbacHarness) cleanup(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ns := client.InNamespace(workNamespace)
	for _, o := range []client.Object{&appsv1.Deployment{}, &appsv1.ReplicaSet{}, &policyv1.PodDisruptionBudget{}, &resourcev1.ResourceClaimTemplate{}, &resourcev1.ResourceClaim{}} {
		if err := h.admin.DeleteAllOf(ctx, o, ns); err != nil {
			t.Fatal(err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		if err := h.admin.DeleteAllOf(ctx, &corev1.Pod{}, ns, client.GracePeriodSeconds(0)); err != nil {
			return false, err
		}
		var left int
		for _, l := range []client.ObjectList{&corev1.PodList{}, &appsv1.ReplicaSetList{}} {
			if err := h.admin.List(ctx, l, ns); err != nil {
				return false, err
			}
			left += len(items(l))
		}
		return left == 0, nil
	})
	if err != nil {
		t.Fatalf("emptying namespace %s: %v", workNamespace, err)
	}
	lists := []client.ObjectList{&apisv1.NodeClaimList{}, &corev1.NodeList{}, &simv1alpha1.SimInstanceList{}, &apisv1.NodePoolList{}, &simv1alpha1.SimNodeClassList{}, &apisv1alpha1.NodeOverlayList{}, &tenonv1alpha1.CommitmentList{}, &resourcev1.ResourceSliceList{}, &resourcev1.DeviceClassList{}}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		left := 0
		for _, l := range lists {
			if err := h.admin.List(ctx, l); err != nil {
				return false, err
			}
			for _, o := range items(l) {
				left++
				if len(o.GetFinalizers()) > 0 {
					if err := h.admin.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); client.IgnoreNotFound(err) != nil {
						return false, err
					}
				}
				if err := h.admin.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
					return false, err
				}
			}
		}
		return left == 0, nil
	})
	if err != nil {
		t.Fatalf("removing the run's objects: %v", err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "tenon-leader"}}
	if err := h.admin.Delete(ctx, lease); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

// items are a list's objects.
func items(l client.ObjectList) []client.Object {
	objs, _ := apimeta.ExtractList(l)
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(client.Object))
	}
	return out
}

// simNodeClass boots instances quickly. The device plugin's delay stays at 3s, as in test/e2e:
// the simulated kubelet reads the Node through the manager's cache when it adds device
// resources, and skips the step for good when the cache has not seen the Node yet.
func simNodeClass() *simv1alpha1.SimNodeClass {
	return &simv1alpha1.SimNodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: simv1alpha1.SimNodeClassSpec{
			Zones:             []string{"us-east-1a", "us-east-1b"},
			BootDelay:         &metav1.Duration{Duration: 200 * time.Millisecond},
			RegistrationDelay: &metav1.Duration{Duration: 200 * time.Millisecond},
			DevicePluginDelay: &metav1.Duration{Duration: 3 * time.Second},
		},
	}
}

// pool is an on-demand m5 NodePool that consolidates at once, any number of nodes at a time.
func pool(name string, mutate ...func(*apisv1.NodePool)) *apisv1.NodePool {
	np := &apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			NodeClassRef: &apisv1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "default"},
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{
				{Key: apisv1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5"}},
				{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{apisv1.CapacityTypeOnDemand}},
			},
			ExpireAfter: apisv1.NewNillableDuration(720 * time.Hour),
		}}},
	}
	np.Spec.Disruption.ConsolidateAfter = apisv1.NewNillableDuration(0)
	np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "100%"}}
	for _, m := range mutate {
		m(np)
	}
	return np
}

// workload is a Deployment of pods asking for cpu, pinned to a NodePool, one per node when
// spread.
func workload(name string, replicas int32, cpu, nodePool string, spread bool) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{
		NodeSelector: map[string]string{apisv1.NodePoolLabelKey: nodePool},
		Containers: []corev1.Container{{Name: "c", Image: "example.com/" + name, Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")},
		}}},
	}
	if spread {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}},
		}}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workNamespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}
