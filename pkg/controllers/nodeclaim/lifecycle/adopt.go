package lifecycle

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// ReasonAdopted is the event reason of a NodeClaim another controller made (Karpenter, or a
// tenon of another hash version) that tenon takes on as its own.
const ReasonAdopted = "Adopted"

// adopt re-stamps the NodePool hash of a claim stamped by another hash version, such as one
// Karpenter made (karpenter.sh/nodepool-hash-version v3): tenon's hash of the same template
// differs from Karpenter's, so the claim is given the hash of its NodePool as it is now, as
// Karpenter itself does when its hash version changes. Until then the claim is never judged
// drifted from its NodePool's template; from then on a change to the template drifts it. A
// claim already Drifted keeps its old hash, and so stays drifted.
// Everything else about such a claim (its finalizer, conditions, Node) is tenon's already:
// both speak the same API. A claim whose NodePool is gone, or that names none, is left as it
// is. The provider's NodeClass hash is re-stamped likewise, through the provider (see
// adoptNodeClassHash). It changes claim in memory; Reconcile writes it.
func (c *Controller) adopt(ctx context.Context, claim *apisv1.NodeClaim) error {
	if err := c.adoptNodePoolHash(ctx, claim); err != nil {
		return err
	}
	return c.adoptNodeClassHash(ctx, claim)
}

// adoptNodeClassHash has a provider that stamps a NodeClass hash (a cloudprovider.HashStamper,
// such as the AWS provider's EC2NodeClass hash) re-stamp a claim launched under another hash
// version, so that a change to its NodeClass drifts it as one tenon launched; a claim already
// Drifted keeps its old hash and stays drifted. Providers without such a hash are left alone.
func (c *Controller) adoptNodeClassHash(ctx context.Context, claim *apisv1.NodeClaim) error {
	s, ok := c.deps.CloudProvider.(cloudprovider.HashStamper)
	if !ok {
		return nil
	}
	from, to, err := s.StampHash(ctx, claim)
	if err != nil || to == "" {
		return err
	}
	c.recordAdopted(claim, "nodeclass", from, to, "nodeclass "+claim.Spec.NodeClassRef.Name+"'s current hash")
	return nil
}

// recordAdopted records the Adopted event of a claim whose hash of kind (nodepool, nodeclass)
// was re-stamped from one version to another, with current (what the new hash is of) unless
// the claim is drifted and so kept its old hash.
func (c *Controller) recordAdopted(claim *apisv1.NodeClaim, kind, from, to, current string) {
	if from == "" {
		from = "none"
	}
	if claim.IsTrue(apisv1.ConditionTypeDrifted) {
		c.deps.Recorder.Eventf(claim, corev1.EventTypeNormal, ReasonAdopted,
			"adopted: %s hash version %s re-stamped as %s; the claim was drifted and stays so", kind, from, to)
		return
	}
	c.deps.Recorder.Eventf(claim, corev1.EventTypeNormal, ReasonAdopted,
		"adopted: %s hash version %s re-stamped as %s with %s", kind, from, to, current)
}

func (c *Controller) adoptNodePoolHash(ctx context.Context, claim *apisv1.NodeClaim) error {
	if claim.Annotations[apisv1.NodePoolHashVersionAnnotationKey] == apisv1.NodePoolHashVersion {
		return nil
	}
	name := claim.Labels[apisv1.NodePoolLabelKey]
	if name == "" {
		return nil
	}
	np := &apisv1.NodePool{}
	if err := c.deps.Client.Get(ctx, types.NamespacedName{Name: name}, np); err != nil {
		return client.IgnoreNotFound(err)
	}
	from := claim.Annotations[apisv1.NodePoolHashVersionAnnotationKey]
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[apisv1.NodePoolHashVersionAnnotationKey] = apisv1.NodePoolHashVersion
	// A claim already found drifted by the controller that made it keeps its old hash, which
	// differs from tenon's, and so stays drifted rather than being forgiven.
	if !claim.IsTrue(apisv1.ConditionTypeDrifted) {
		claim.Annotations[apisv1.NodePoolHashAnnotationKey] = np.Hash()
	}
	c.recordAdopted(claim, "nodepool", from, apisv1.NodePoolHashVersion, "nodepool "+name+"'s current template hash")
	return nil
}
