package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instancetype"
	"github.com/tenon-sh/tenon/pkg/manifest"
)

// TypesResolver resolves a NodePool's NodeClass to its instance types (see Options).
type TypesResolver = func(set *manifest.Set, np *apisv1.NodePool) ([]*catalog.InstanceType, bool, error)

// EC2NodeClassInstanceTypes resolves NodePools whose NodeClass is a karpenter.k8s.aws/v1
// EC2NodeClass given in the manifests to the embedded catalog of region with that NodeClass's
// kubelet, block-device and instance-store settings (instancetype.Embedded). A NodePool naming
// an EC2NodeClass the manifests do not contain falls back to the embedded catalog.
func EC2NodeClassInstanceTypes(region string) TypesResolver {
	return func(set *manifest.Set, np *apisv1.NodePool) ([]*catalog.InstanceType, bool, error) {
		ref := np.Spec.Template.Spec.NodeClassRef
		if ref == nil || ref.Group != awsv1.Group || ref.Kind != awsv1.EC2NodeClassKind {
			return nil, false, nil
		}
		for _, u := range set.Other {
			if u.GetKind() != awsv1.EC2NodeClassKind || u.GetName() != ref.Name || u.GroupVersionKind().Group != awsv1.Group {
				continue
			}
			nc := &awsv1.EC2NodeClass{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc); err != nil {
				return nil, false, fmt.Errorf("EC2NodeClass %s: %w", u.GetName(), err)
			}
			its, err := instancetype.Embedded(region, nc)
			return its, err == nil, err
		}
		return nil, false, nil
	}
}

// FirstOf resolves a NodePool with the first resolver that does.
func FirstOf(resolvers ...TypesResolver) TypesResolver {
	return func(set *manifest.Set, np *apisv1.NodePool) ([]*catalog.InstanceType, bool, error) {
		for _, r := range resolvers {
			if its, ok, err := r(set, np); ok || err != nil {
				return its, ok, err
			}
		}
		return nil, false, nil
	}
}
