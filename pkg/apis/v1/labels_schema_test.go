package v1_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"sigs.k8s.io/yaml"
)

// patchYAML applies a JSON merge patch written in YAML to a manifest.
func patchYAML(base, p string) string {
	var b, m map[string]interface{}
	if err := yaml.Unmarshal([]byte(base), &b); err != nil {
		panic(err)
	}
	if err := yaml.Unmarshal([]byte(p), &m); err != nil {
		panic(err)
	}
	var merge func(dst, src map[string]interface{})
	merge = func(dst, src map[string]interface{}) {
		for k, v := range src {
			if sub, ok := v.(map[string]interface{}); ok {
				if d, ok := dst[k].(map[string]interface{}); ok {
					merge(d, sub)
					continue
				}
			}
			dst[k] = v
		}
	}
	merge(b, m)
	out, err := yaml.Marshal(b)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// keyCorpus covers every list in labels.go and the edges of each domain rule.
func keyCorpus() []string {
	keys := []string{"team", "Test", "example.com/team", "kubernetes.io", "karpenter.k8s.aws/instance-family", v1.LabelTopologyZoneID}
	keys = append(keys, v1.WellKnownLabels...)
	keys = append(keys, v1.RestrictedLabels...)
	for alias, canonical := range v1.NormalizedLabels {
		keys = append(keys, alias, canonical)
	}
	for _, d := range append(append([]string{}, v1.RestrictedLabelDomains...), v1.LabelDomainExceptions...) {
		keys = append(keys, d+"/x", "sub."+d+"/x", "a.b."+d+"/x", "not"+d+"/x", d+".example.com/x")
	}
	return keys
}

// The CEL rules on requirement keys must decide exactly as ValidateRequirementKey does.
func TestRequirementKeyRulesAgreeWithLabelsGo(t *testing.T) {
	for _, key := range keyCorpus() {
		goErr := v1.ValidateRequirementKey(key)
		manifest := patchYAML(apitest.BaseNodeClaim, fmt.Sprintf(`{spec: {requirements: [{key: %q, operator: Exists}]}}`, key))
		schemaErr := apitest.Check(apitest.Case{Object: manifest})
		if (goErr == nil) != (schemaErr == nil) {
			t.Errorf("key %q: ValidateRequirementKey says %v, the schema says %v", key, goErr, schemaErr)
		}
	}
}

// Template labels follow the same rules, and karpenter.sh/nodepool is refused too.
func TestTemplateLabelRulesAgreeWithLabelsGo(t *testing.T) {
	for _, key := range keyCorpus() {
		want := v1.ValidateRequirementKey(key) == nil && key != v1.NodePoolLabelKey
		manifest := patchYAML(apitest.BaseNodePool, fmt.Sprintf(`{spec: {template: {metadata: {labels: {%q: x}}}}}`, key))
		err := apitest.Check(apitest.Case{Object: manifest})
		if want != (err == nil) {
			t.Errorf("label %q: want accepted=%v, the schema says %v", key, want, err)
		}
	}
}

func TestKeyCorpusHasBothOutcomes(t *testing.T) {
	var allowed, refused int
	for _, key := range keyCorpus() {
		if v1.ValidateRequirementKey(key) == nil {
			allowed++
		} else {
			refused++
		}
	}
	if allowed < 10 || refused < 10 {
		t.Errorf("corpus too one-sided: %d allowed, %d refused", allowed, refused)
	}
	if !strings.Contains(fmt.Sprint(keyCorpus()), "kubernetes.io/hostname") {
		t.Error("corpus lacks kubernetes.io/hostname")
	}
}
