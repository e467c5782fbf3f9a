package simulated

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/dra"
)

// ResourceSliceName is the name of the ResourceSlice that publishes a node's GPUs.
func ResourceSliceName(node string) string { return node + "-" + dra.DriverNVIDIA }

// PublishDevices creates the ResourceSlice in which NVIDIA's DRA driver would publish the
// GPUs of a node of type it (dra.DevicesOf: one device per GPU, or per MIG instance when the
// type's GPUs are partitioned, named as dra.DeviceNames does, in a pool named after the node), so that kube-scheduler can allocate claims on it. A type without such
// devices publishes nothing; a slice that exists already is left as it is, and an API server
// that does not serve resource.k8s.io/v1 is not an error (it has no claims to allocate).
func PublishDevices(ctx context.Context, c client.Client, node string, it *catalog.InstanceType) error {
	devs, ok := dra.DevicesOf(it)
	if !ok {
		return nil
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: ResourceSliceName(node)},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   devs.Driver,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
		},
	}
	for _, name := range dra.DeviceNames(it, devs) {
		slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{Name: name, Attributes: devs.Attributes, Capacity: devs.Capacity})
	}
	err := c.Create(ctx, slice)
	if err == nil || apierrors.IsAlreadyExists(err) || meta.IsNoMatchError(err) {
		return nil
	}
	return fmt.Errorf("node %s: publishing its GPUs: %w", node, err)
}

// UnpublishDevices deletes the ResourceSlice of a node's GPUs, if there is one.
func UnpublishDevices(ctx context.Context, c client.Client, node string) error {
	err := c.Delete(ctx, &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: ResourceSliceName(node)}})
	if err == nil || apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	return fmt.Errorf("node %s: withdrawing its GPUs: %w", node, err)
}
