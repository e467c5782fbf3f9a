// Command crdpatch adds to generated CustomResourceDefinitions the validation that
// controller-gen markers cannot express. Markers cannot reach inside a type from another
// module or constrain the values of a map[string]string, and the equivalent CEL rules over
// unbounded strings exceed the API server's cost budget, so the rules are written as OpenAPI
// properties, which cost nothing. Schemas are recognised by their shape, so the rules apply to
// every CRD in the directory:
//
//   - every array of core/v1 Taints: key is a qualified name (optional DNS subdomain prefix
//     and '/', then at most 63 characters), value a label value (at most 63 characters), and
//     effect one of NoSchedule, PreferNoSchedule, NoExecute;
//   - every embedded object metadata with a labels map (such as a NodePool's
//     spec.template.metadata): each label value is a label value.
//
// Usage: go run ./hack/crdpatch DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

const (
	qualifiedName = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	labelValue    = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch DIR")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.yaml"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no YAML files in %s", os.Args[1])
	}
	for _, f := range files {
		if err != nil {
			break
		}
		err = patchFile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdpatch:", err)
		os.Exit(1)
	}
}

func patchFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd map[string]interface{}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	walk(crd)
	out, err := yaml.Marshal(crd)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, append([]byte("---\n"), out...), 0o644)
}

// walk visits every map in the document and patches Taint array items wherever they are.
func walk(node interface{}) {
	switch n := node.(type) {
	case map[string]interface{}:
		if n["type"] == "array" {
			if items, ok := n["items"].(map[string]interface{}); ok && isTaint(items) {
				patchTaint(items)
			}
		}
		if props, ok := n["properties"].(map[string]interface{}); ok {
			if meta, ok := props["metadata"].(map[string]interface{}); ok {
				patchLabelValues(meta)
			}
		}
		for _, v := range n {
			walk(v)
		}
	case []interface{}:
		for _, v := range n {
			walk(v)
		}
	}
}

// isTaint recognises controller-gen's rendering of core/v1 Taint by its property names.
func isTaint(schema map[string]interface{}) bool {
	props, ok := schema["properties"].(map[string]interface{})
	if !ok || len(props) != 4 {
		return false
	}
	for _, name := range []string{"effect", "key", "timeAdded", "value"} {
		if _, ok := props[name]; !ok {
			return false
		}
	}
	return true
}

func patchTaint(schema map[string]interface{}) {
	props := schema["properties"].(map[string]interface{})
	set := func(field string, kv map[string]interface{}) {
		p, _ := props[field].(map[string]interface{})
		for k, v := range kv {
			p[k] = v
		}
	}
	set("key", map[string]interface{}{"minLength": 1, "maxLength": 317, "pattern": qualifiedName})
	set("value", map[string]interface{}{"maxLength": 63, "pattern": labelValue})
	set("effect", map[string]interface{}{"enum": []interface{}{"NoSchedule", "PreferNoSchedule", "NoExecute"}})
}

// patchLabelValues constrains the values of metadata.labels when the metadata schema declares
// labels as a map of strings.
func patchLabelValues(meta map[string]interface{}) {
	props, _ := meta["properties"].(map[string]interface{})
	labels, _ := props["labels"].(map[string]interface{})
	values, _ := labels["additionalProperties"].(map[string]interface{})
	if values == nil || values["type"] != "string" {
		return
	}
	values["maxLength"] = 63
	values["pattern"] = labelValue
}
