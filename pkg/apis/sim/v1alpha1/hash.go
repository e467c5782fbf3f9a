package v1alpha1

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
)

// Hash returns a stable hash of the spec fields that shape an instance once launched: the root
// volume size, the node labels and the tags. The simulated cloud stamps it on each instance
// (annotation karpenter.sh/nodeclass-hash) and reports drift when it changes. Other fields
// (delays, pools, reservations, prices, interruptions) only affect later launches; zones are
// judged separately (an instance drifts when its zone is removed).
func (in *SimNodeClass) Hash() string {
	h := struct {
		RootVolume int64             `json:"rootVolume"`
		Labels     map[string]string `json:"labels,omitempty"`
		Tags       map[string]string `json:"tags,omitempty"`
	}{in.Spec.GetRootVolumeSize(), in.Spec.Labels, in.Spec.Tags}
	// encoding/json sorts map keys and omits empty maps, so the encoding is canonical.
	b, err := json.Marshal(h)
	if err != nil {
		panic("v1alpha1: marshal hash input: " + err.Error())
	}
	f := fnv.New64a()
	_, _ = f.Write(b)
	return strconv.FormatUint(f.Sum64(), 10)
}
