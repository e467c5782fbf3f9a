package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// CRDs returns every embedded CustomResourceDefinition, ordered by name. Each call returns
// fresh objects that the caller may modify.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("crds: %s: %w", name, err)
		}
		crds = append(crds, crd)
	}
	slices.SortFunc(crds, func(a, b *apiextensionsv1.CustomResourceDefinition) int {
		return strings.Compare(a.Name, b.Name)
	})
	return crds, nil
}

// Get returns the embedded CustomResourceDefinition with the given name, such as
// "nodepools.karpenter.sh".
func Get(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := CRDs()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		if crd.Name == name {
			return crd, nil
		}
	}
	return nil, fmt.Errorf("crds: no CustomResourceDefinition named %q", name)
}
