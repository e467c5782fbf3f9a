package plan

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated"
	"github.com/tenon-sh/tenon/pkg/manifest"
)

// SimulatedInstanceTypes resolves NodePools whose NodeClass is a SimNodeClass given in the
// manifests to the instance types the simulated cloud would sell at time at. A NodePool naming a
// SimNodeClass the manifests do not contain falls back to the embedded catalog.
func SimulatedInstanceTypes(at time.Time) func(*manifest.Set, *apisv1.NodePool) ([]*catalog.InstanceType, bool, error) {
	return func(set *manifest.Set, np *apisv1.NodePool) ([]*catalog.InstanceType, bool, error) {
		ref := np.Spec.Template.Spec.NodeClassRef
		if ref == nil || ref.Group != simv1alpha1.Group || ref.Kind != simv1alpha1.SimNodeClassKind {
			return nil, false, nil
		}
		for _, u := range set.Other {
			if u.GetKind() != simv1alpha1.SimNodeClassKind || u.GetName() != ref.Name {
				continue
			}
			nc := &simv1alpha1.SimNodeClass{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc); err != nil {
				return nil, false, fmt.Errorf("SimNodeClass %s: %w", u.GetName(), err)
			}
			its, err := simulated.OfflineInstanceTypes(nc, np, at)
			return its, err == nil, err
		}
		return nil, false, nil
	}
}
