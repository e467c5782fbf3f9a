package simulated

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
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
	taints := make([]corev1.Taint, 0, len(m.startupTaints)+len(m.taints))
	taints = append(taints, m.startupTaints...)
	taints = append(taints, m.taints...)
	return RegisteringNode(inst.ID, inst.ProviderID(), inst.Type, labels, taints, m.imageID)
}

// RegisteringNode is the Node a kubelet of a simulated machine registers, for this provider
// and for other front doors onto the same engine (the EC2-compatible endpoint): called name,
// with labels plus kubernetes.io/hostname, the unregistered taint followed by taints, the kwok
// annotation, and the capacity and allocatable of the type without device resources.
func RegisteringNode(name, providerID string, it *catalog.InstanceType, labels map[string]string, taints []corev1.Taint, imageID string) *corev1.Node {
	labels = maps.Clone(labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[apisv1.LabelHostname] = name
	all := make([]corev1.Taint, 0, 1+len(taints))
	all = append(all, apisv1.UnregisteredNoExecuteTaint)
	all = append(all, taints...)
	arch, _ := it.Label(apisv1.LabelArch)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{KwokNodeAnnotation: KwokNodeAnnotationValue},
		},
		Spec: corev1.NodeSpec{ProviderID: providerID, Taints: all},
		Status: corev1.NodeStatus{
			Capacity:    cloud.WithoutDevices(it.Capacity).ResourceList(),
			Allocatable: cloud.WithoutDevices(it.Allocatable()).ResourceList(),
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:    arch,
				OperatingSystem: apisv1.OSLinux,
				OSImage:         imageID,
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
// as a device plugin registering them would.
func (p *Provider) addDevices(ctx context.Context, inst cloud.Instance) error {
	return AddDevices(ctx, p.client, inst.ID, inst.Type)
}

// AddDevices adds the device resources of type it to Node name's capacity and allocatable, as
// a device plugin registering them would, and publishes its GPUs in a ResourceSlice as a DRA
// driver would (PublishDevices). It writes them with a merge patch of the Node's
// status and reads nothing first: c may be a manager's cached client, whose cache can lag the
// Node the caller has just created, and a Node missing from a lagging cache must not count as
// done (its devices would never appear). The patch goes to the API server, so NotFound there
// means the Node is really gone, which needs nothing; any other error is returned for the
// caller to retry. Patching a Node that already has the resources changes nothing.
func AddDevices(ctx context.Context, c client.Client, name string, it *catalog.InstanceType) error {
	capacity := it.Capacity.ResourceList()
	allocatable := it.Allocatable().ResourceList()
	base := cloud.WithoutDevices(it.Capacity).ResourceList()
	devCapacity, devAllocatable := corev1.ResourceList{}, corev1.ResourceList{}
	for res, q := range capacity {
		if _, isBase := base[res]; !isBase {
			devCapacity[res] = q
			devAllocatable[res] = allocatable[res]
		}
	}
	if len(devCapacity) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"capacity": devCapacity, "allocatable": devAllocatable}})
	if err != nil {
		return fmt.Errorf("node %s: encoding its device resources: %w", name, err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return client.IgnoreNotFound(err)
	}
	// The GPUs are published for dynamic resource allocation as well (dra.go).
	return PublishDevices(ctx, c, name, it)
}

// deleteNode deletes the instance's Node (finalizers may hold it; that is not our business).
func (p *Provider) deleteNode(ctx context.Context, id string) error {
	if err := UnpublishDevices(ctx, p.client, id); err != nil {
		return err
	}
	return client.IgnoreNotFound(p.client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: id}}))
}
