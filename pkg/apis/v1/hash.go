package v1

import (
	"cmp"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// NodePoolHashVersion versions the algorithm of NodePool.Hash. It is stamped on NodeClaims next
// to the hash (NodePoolHashVersionAnnotationKey). A NodeClaim whose version differs, such as one
// created by Karpenter, must have its hash re-stamped rather than be judged drifted. Bump it
// whenever a change here, or a new default in the template, changes the hash of an unchanged
// NodePool.
const NodePoolHashVersion = "tenon-v1"

// Hash returns a stable hash of the NodePool's template for drift detection: NodeClaims carry
// the hash of the template they were made from, and differ from a NodePool whose hash changed.
//
// Requirements are left out because a NodeClaim's requirements are narrower than its
// template's, so drift on them is judged by comparing the requirements themselves. Disruption,
// limits, weight and replicas are outside the template and never cause drift. Taints are
// hashed as sets (order does not matter), and empty maps and lists hash like absent ones.
func (in *NodePool) Hash() string {
	t := in.Spec.Template.DeepCopy()
	t.Spec.Requirements = nil
	sortTaints(t.Spec.Taints)
	sortTaints(t.Spec.StartupTaints)
	// encoding/json writes map keys in sorted order and omits empty maps and lists, which
	// makes the encoding canonical. Marshalling these types cannot fail.
	b, err := json.Marshal(t)
	if err != nil {
		panic("v1: marshal NodeClaimTemplate: " + err.Error())
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return strconv.FormatUint(h.Sum64(), 10)
}

func sortTaints(taints []corev1.Taint) {
	slices.SortFunc(taints, func(a, b corev1.Taint) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Value, b.Value), cmp.Compare(a.Effect, b.Effect))
	})
}
