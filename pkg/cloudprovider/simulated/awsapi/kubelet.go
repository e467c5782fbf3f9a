package awsapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
)

// Kubelet plays the kubelets of the endpoint's instances on an API server, with the simulated
// provider's Node shapes (simulated.RegisteringNode, simulated.AddDevices) so that both front
// doors register the same Nodes: once an instance's registration is due its Node is created,
// named by the instance's private DNS name as on EKS, with providerID aws:///<zone>/<id>, the
// type's and offering's labels and the unregistered taint (the NodeClaim's labels and taints
// are the autoscaler's registration to sync); its device resources are added once the device
// plugin has run; and the Node is deleted once the instance shuts down. A Node is registered
// once: one deleted while its instance runs is not registered again.
type Kubelet struct {
	Server *Server
	Client client.Client
	// Resync is the time between passes (default one second).
	Resync time.Duration

	registered map[string]bool
	devices    map[string]bool
	gone       map[string]bool
}

// Start runs passes until ctx is done; a failed pass is logged and retried at the next.
func (k *Kubelet) Start(ctx context.Context) error {
	resync := k.Resync
	if resync <= 0 {
		resync = time.Second
	}
	t := time.NewTicker(resync)
	defer t.Stop()
	for {
		if err := k.Pass(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "aws endpoint kubelet pass failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Pass brings every instance's Node up to date once. It is level-triggered and may be
// repeated; it is not safe for concurrent use.
func (k *Kubelet) Pass(ctx context.Context) error {
	if k.registered == nil {
		k.registered, k.devices, k.gone = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	now := k.Server.opts.Clock.Now()
	var errs []error
	known := map[string]bool{}
	for _, inst := range k.Server.Instances() {
		known[inst.ID] = true
		name := inst.PrivateDNS
		switch inst.State {
		case "pending", "running":
			if inst.State != "running" || inst.RegisteredAt.After(now) || k.gone[inst.ID] {
				continue
			}
			if !k.registered[inst.ID] {
				node := simulated.RegisteringNode(name, inst.ProviderID, inst.Type, inst.Labels, nil, inst.ImageID)
				if err := k.Client.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
					errs = append(errs, err)
					continue
				}
				k.registered[inst.ID] = true
			}
			if !inst.DevicesAt.IsZero() && !inst.DevicesAt.After(now) && !k.devices[inst.ID] {
				// The GPUs come up in the MIG layout the node's labels name, as NVIDIA's MIG
				// manager applies it before the device plugin and DRA driver publish them.
				it, err := k.migLayout(ctx, name, inst.Type)
				if err == nil && it == nil {
					continue // the node's labels are not yet its NodePool's
				}
				if err == nil {
					err = simulated.AddDevices(ctx, k.Client, name, it)
				}
				if err != nil {
					errs = append(errs, err)
					continue
				}
				k.devices[inst.ID] = true
			}
		default:
			if k.gone[inst.ID] {
				continue
			}
			err := simulated.UnpublishDevices(ctx, k.Client, name)
			if err == nil {
				err = k.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
			}
			if client.IgnoreNotFound(err) != nil {
				errs = append(errs, err)
				continue
			}
			k.gone[inst.ID] = true
		}
	}
	for _, m := range []map[string]bool{k.registered, k.devices, k.gone} {
		for id := range m {
			if !known[id] {
				delete(m, id)
			}
		}
	}
	return errors.Join(errs...)
}

// migLayout returns the type of Node name with its GPUs in the MIG layout the Node's
// catalog.LabelMIGConfig names (tenon copies the NodePool's labels onto the Node when it
// registers); nil until tenon has registered the Node (its labels are then the NodePool's). A
// type without MIG-capable GPUs is returned as it is, without reading the Node.
func (k *Kubelet) migLayout(ctx context.Context, name string, it *catalog.InstanceType) (*catalog.InstanceType, error) {
	if len(catalog.MIGProfiles(it.Shape.GPUName, it.Shape.GPUMemoryMiB)) == 0 {
		return it, nil
	}
	node := &corev1.Node{}
	if err := k.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return nil, fmt.Errorf("node %s: reading its MIG layout: %w", name, err)
	}
	if node.Labels[apisv1.NodeRegisteredLabelKey] != "true" {
		return nil, nil
	}
	return catalog.PartitionGPUs(it, node.Labels[catalog.LabelMIGConfig])
}
