package sim

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instancetype"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/manifest"
)

// EC2NodeClassPrefix names the classes of NodePools whose NodeClass is an EC2NodeClass of the
// manifests: they buy from the embedded catalog with that NodeClass's kubelet settings.
const EC2NodeClassPrefix = "ec2nodeclass:"

// ec2NodeClasses decodes the manifests' EC2NodeClasses, by name.
func ec2NodeClasses(set *manifest.Set) (map[string]*awsv1.EC2NodeClass, error) {
	out := map[string]*awsv1.EC2NodeClass{}
	for _, u := range set.Other {
		if u.GetKind() != awsv1.EC2NodeClassKind || u.GroupVersionKind().Group != awsv1.Group {
			continue
		}
		nc := &awsv1.EC2NodeClass{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc); err != nil {
			return nil, fmt.Errorf("EC2NodeClass %s: %w", u.GetName(), err)
		}
		out[nc.Name] = nc
	}
	return out, nil
}

// ec2Class sets p's class to the EC2NodeClass's (instancetype.Embedded over the region's
// embedded catalog, with the default delays) and returns its types.
func (e *Env) ec2Class(p *Pool, nc *awsv1.EC2NodeClass, opts EnvOptions) ([]*catalog.InstanceType, error) {
	region := opts.Region
	if region == "" {
		region = catalog.DefaultRegion
	}
	p.Class = EC2NodeClassPrefix + nc.Name
	if _, done := e.Classes[p.Class]; !done {
		its, err := instancetype.Embedded(region, nc)
		if err != nil {
			return nil, err
		}
		base, err := catalog.Load(region)
		if err != nil {
			return nil, err
		}
		cat, err := catalog.New(base.Region, base.Zones, its)
		if err != nil {
			return nil, fmt.Errorf("EC2NodeClass %s: %w", nc.Name, err)
		}
		e.Classes[p.Class] = cloud.ClassConfig{Catalog: cat}
		e.Notes = append(e.Notes, fmt.Sprintf("EC2NodeClass %s: priced with the embedded %s catalog and its kubelet settings, with the default delays", nc.Name, region))
	}
	var spec simv1alpha1.SimNodeClassSpec
	p.Registration, p.DevicePlugin = spec.GetRegistrationDelay(), spec.GetDevicePluginDelay()
	return e.Classes[p.Class].Catalog.Types, nil
}
