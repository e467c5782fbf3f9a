package index

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Field names of the indexes.
const (
	// NodeProviderID indexes Nodes by spec.providerID.
	NodeProviderID = "spec.providerID"
	// NodeClaimProviderID indexes NodeClaims by status.providerID.
	NodeClaimProviderID = "status.providerID"
	// PodNodeName indexes Pods by spec.nodeName.
	PodNodeName = "spec.nodeName"
	// VolumeAttachmentNodeName indexes VolumeAttachments by spec.nodeName.
	VolumeAttachmentNodeName = "spec.nodeName"
)

var (
	mu   sync.Mutex
	done = map[client.FieldIndexer]bool{}
)

// Setup registers the indexes on mgr's cache unless they are registered already. Call it
// before the manager starts.
func Setup(ctx context.Context, mgr manager.Manager) error {
	mu.Lock()
	defer mu.Unlock()
	fi := mgr.GetFieldIndexer()
	if done[fi] {
		return nil
	}
	indexes := []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&corev1.Node{}, NodeProviderID, func(o client.Object) []string { return nonEmpty(o.(*corev1.Node).Spec.ProviderID) }},
		{&apisv1.NodeClaim{}, NodeClaimProviderID, func(o client.Object) []string { return nonEmpty(o.(*apisv1.NodeClaim).Status.ProviderID) }},
		{&corev1.Pod{}, PodNodeName, func(o client.Object) []string { return nonEmpty(o.(*corev1.Pod).Spec.NodeName) }},
		{&storagev1.VolumeAttachment{}, VolumeAttachmentNodeName, func(o client.Object) []string {
			return nonEmpty(o.(*storagev1.VolumeAttachment).Spec.NodeName)
		}},
	}
	for _, ix := range indexes {
		if err := fi.IndexField(ctx, ix.obj, ix.field, ix.fn); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	done[fi] = true
	return nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// NodeForProviderID returns the Node whose spec.providerID is providerID, or nil when there is
// none. When several claim it (which the cloud should never allow) the oldest is returned.
func NodeForProviderID(ctx context.Context, r client.Reader, providerID string) (*corev1.Node, error) {
	if providerID == "" {
		return nil, nil
	}
	list := &corev1.NodeList{}
	if err := r.List(ctx, list, client.MatchingFields{NodeProviderID: providerID}); err != nil {
		return nil, err
	}
	var found *corev1.Node
	for i := range list.Items {
		n := &list.Items[i]
		if found == nil || n.CreationTimestamp.Before(&found.CreationTimestamp) {
			found = n
		}
	}
	return found, nil
}

// NodeClaimsForProviderID returns the NodeClaims whose status.providerID is providerID.
func NodeClaimsForProviderID(ctx context.Context, r client.Reader, providerID string) ([]apisv1.NodeClaim, error) {
	if providerID == "" {
		return nil, nil
	}
	list := &apisv1.NodeClaimList{}
	if err := r.List(ctx, list, client.MatchingFields{NodeClaimProviderID: providerID}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// PodsOnNode returns the Pods bound to the Node called nodeName.
func PodsOnNode(ctx context.Context, r client.Reader, nodeName string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.MatchingFields{PodNodeName: nodeName}); err != nil {
		return nil, err
	}
	return list.Items, nil
}
