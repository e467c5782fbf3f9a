package simulated

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// Kwok's marker: kwok manages (keeps Ready, heartbeats, runs the pods of) only the Nodes that
// carry this annotation.
const (
	KwokNodeAnnotation      = "kwok.x-k8s.io/node"
	KwokNodeAnnotationValue = "fake"
)

// nodeFor is the Node an instance registers: named by its instance ID, with the labels it was
// launched with and kubernetes.io/hostname, the unregistered taint followed by the claim's
// startup taints and taints, and the capacity and allocatable of its type without device
// resources (a device plugin adds them later).
func nodeFor(inst cloud.Instance, m *instanceMeta) *corev1.Node {
	labels := maps.Clone(m.nodeLabels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, inst.Labels())
	labels[apisv1.LabelHostname] = inst.ID
	taints := make([]corev1.Taint, 0, 1+len(m.startupTaints)+len(m.taints))
	taints = append(taints, apisv1.UnregisteredNoExecuteTaint)
	taints = append(taints, m.startupTaints...)
	taints = append(taints, m.taints...)
	arch, _ := inst.Type.Label(apisv1.LabelArch)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        inst.ID,
			Labels:      labels,
			Annotations: map[string]string{KwokNodeAnnotation: KwokNodeAnnotationValue},
		},
		Spec: corev1.NodeSpec{ProviderID: inst.ProviderID(), Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    cloud.WithoutDevices(inst.Type.Capacity).ResourceList(),
			Allocatable: cloud.WithoutDevices(inst.Type.Allocatable()).ResourceList(),
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:    arch,
				OperatingSystem: apisv1.OSLinux,
				OSImage:         m.imageID,
			},
		},
	}
}

// registerNode creates the instance's Node; one that exists already counts as registered.
func (p *Provider) registerNode(ctx context.Context, inst cloud.Instance, m *instanceMeta) error {
	err := p.client.Create(ctx, nodeFor(inst, m))
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// addDevices adds the instance type's device resources to its Node's capacity and allocatable,
// as a device plugin registering them would. A Node that is gone, or already has them, needs
// nothing.
func (p *Provider) addDevices(ctx context.Context, inst cloud.Instance) error {
	node := &corev1.Node{}
	if err := p.client.Get(ctx, types.NamespacedName{Name: inst.ID}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	capacity := inst.Type.Capacity.ResourceList()
	allocatable := inst.Type.Allocatable().ResourceList()
	missing := false
	for name := range capacity {
		if _, ok := node.Status.Capacity[name]; !ok {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	orig := node.DeepCopy()
	if node.Status.Capacity == nil {
		node.Status.Capacity = corev1.ResourceList{}
	}
	if node.Status.Allocatable == nil {
		node.Status.Allocatable = corev1.ResourceList{}
	}
	for name, q := range capacity {
		if _, base := cloud.WithoutDevices(inst.Type.Capacity).ResourceList()[name]; !base {
			node.Status.Capacity[name] = q
			node.Status.Allocatable[name] = allocatable[name]
		}
	}
	return client.IgnoreNotFound(p.client.Status().Patch(ctx, node, client.MergeFrom(orig)))
}

// deleteNode deletes the instance's Node (finalizers may hold it; that is not our business).
func (p *Provider) deleteNode(ctx context.Context, id string) error {
	return client.IgnoreNotFound(p.client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: id}}))
}
