package apitest

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// patch applies a JSON merge patch (RFC 7386), written in YAML, to a YAML manifest and returns
// the result as YAML. Maps merge key by key, null deletes a key, anything else replaces.
// It panics on malformed input: the inputs are literals in this package.
func patch(base, mergePatch string) string {
	var b, p map[string]interface{}
	if err := yaml.Unmarshal([]byte(base), &b); err != nil {
		panic(fmt.Sprintf("apitest: base manifest: %v", err))
	}
	if err := yaml.Unmarshal([]byte(mergePatch), &p); err != nil {
		panic(fmt.Sprintf("apitest: patch %q: %v", mergePatch, err))
	}
	out, err := yaml.Marshal(mergeMaps(b, p))
	if err != nil {
		panic(fmt.Sprintf("apitest: %v", err))
	}
	return string(out)
}

func mergeMaps(dst, src map[string]interface{}) map[string]interface{} {
	if dst == nil {
		dst = map[string]interface{}{}
	}
	for k, v := range src {
		switch v := v.(type) {
		case nil:
			delete(dst, k)
		case map[string]interface{}:
			d, _ := dst[k].(map[string]interface{})
			dst[k] = mergeMaps(d, v)
		default:
			dst[k] = v
		}
	}
	return dst
}
