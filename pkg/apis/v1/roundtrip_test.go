package v1_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// TestRoundTrip decodes every valid example into the Go types and encodes it again: nothing
// the manifest says may be lost or changed. The manifest is first defaulted by the schema, as
// the API server does before a controller reads it (the Go zero value of a NillableDuration
// means Never, so an omitted duration only means its default after defaulting).
func TestRoundTrip(t *testing.T) {
	for _, c := range append(apitest.ValidNodePools(), apitest.ValidNodeClaims()...) {
		t.Run(c.Name, func(t *testing.T) {
			in, err := apitest.Apply(apitest.Case{Object: c.Object})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			var typed interface{}
			switch in["kind"] {
			case v1.NodePoolKind:
				typed = &v1.NodePool{}
			case v1.NodeClaimKind:
				typed = &v1.NodeClaim{}
			default:
				t.Fatalf("unexpected kind %v", in["kind"])
			}
			// Strict: a field the types do not model is an error, not a silent loss.
			strictErrs, err := sigsjson.UnmarshalStrict(b, typed)
			if err != nil || len(strictErrs) > 0 {
				t.Fatalf("decode: %v %v", err, strictErrs)
			}
			encoded, err := json.Marshal(typed)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]interface{}{}
			if err := utiljson.Unmarshal(encoded, &out); err != nil {
				t.Fatal(err)
			}
			if diffs := semanticDiff("", in, out); len(diffs) > 0 {
				y, _ := yaml.Marshal(out)
				t.Errorf("round trip changed the object:\n%v\nencoded:\n%s", diffs, y)
			}
		})
	}
}

// semanticDiff lists where out does not mean what in means. Durations and quantities compare
// by value ("720h" = "720h0m0s", "1000m" = "1"); fields only out has must be empty.
func semanticDiff(path string, in, out interface{}) []string {
	switch a := in.(type) {
	case map[string]interface{}:
		b, ok := out.(map[string]interface{})
		if !ok {
			return []string{fmt.Sprintf("%s: %#v became %#v", path, in, out)}
		}
		var diffs []string
		for _, k := range sortedKeys(a, b) {
			av, inA := a[k]
			bv, inB := b[k]
			switch {
			case !inB:
				diffs = append(diffs, fmt.Sprintf("%s.%s: %#v was lost", path, k, av))
			case !inA && !isEmpty(bv):
				diffs = append(diffs, fmt.Sprintf("%s.%s: %#v appeared", path, k, bv))
			case inA:
				diffs = append(diffs, semanticDiff(path+"."+k, av, bv)...)
			}
		}
		return diffs
	case []interface{}:
		b, ok := out.([]interface{})
		if !ok || len(a) != len(b) {
			return []string{fmt.Sprintf("%s: %#v became %#v", path, in, out)}
		}
		var diffs []string
		for i := range a {
			diffs = append(diffs, semanticDiff(fmt.Sprintf("%s[%d]", path, i), a[i], b[i])...)
		}
		return diffs
	case string:
		if b, ok := out.(string); ok && sameString(a, b) {
			return nil
		}
	default:
		if reflect.DeepEqual(in, out) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: %#v became %#v", path, in, out)}
}

func sameString(a, b string) bool {
	if a == b {
		return true
	}
	if da, err := time.ParseDuration(a); err == nil {
		db, err := time.ParseDuration(b)
		return err == nil && da == db
	}
	qa, err := resource.ParseQuantity(a)
	if err != nil {
		return false
	}
	qb, err := resource.ParseQuantity(b)
	return err == nil && qa.Cmp(qb) == 0
}

func isEmpty(v interface{}) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []interface{}:
		return len(v) == 0
	case map[string]interface{}:
		for _, e := range v {
			if !isEmpty(e) {
				return false
			}
		}
		return true
	}
	return false
}

func sortedKeys(maps ...map[string]interface{}) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func TestSemanticDiffFindsChanges(t *testing.T) {
	in := map[string]interface{}{"a": "720h", "b": "1", "c": []interface{}{"x"}, "d": int64(1)}
	if d := semanticDiff("", in, map[string]interface{}{"a": "720h0m0s", "b": "1000m", "c": []interface{}{"x"}, "d": int64(1), "e": nil}); len(d) != 0 {
		t.Errorf("equal objects differ: %v", d)
	}
	for _, out := range []map[string]interface{}{
		{"a": "720h", "b": "1", "c": []interface{}{"x"}},                              // lost
		{"a": "721h", "b": "1", "c": []interface{}{"x"}, "d": int64(1)},               // changed duration
		{"a": "720h", "b": "2", "c": []interface{}{"x"}, "d": int64(1)},               // changed quantity
		{"a": "720h", "b": "1", "c": []interface{}{"x", "y"}, "d": int64(1)},          // longer list
		{"a": "720h", "b": "1", "c": []interface{}{"x"}, "d": int64(1), "e": "extra"}, // appeared
	} {
		if d := semanticDiff("", in, out); len(d) == 0 {
			t.Errorf("no difference found between %v and %v", in, out)
		}
	}
}
