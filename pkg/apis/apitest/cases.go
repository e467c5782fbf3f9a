package apitest

import (
	"fmt"
	"strings"

	"github.com/tenon-sh/tenon/pkg/apis/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// Case is one object the API server must accept or refuse.
type Case struct {
	// Name says what the case checks.
	Name string
	// Object is the manifest, in YAML.
	Object string
	// Old, when set, is the stored object and the case is an update from Old to Object;
	// otherwise the case is a create. Old is itself valid.
	Old string
	// Want is a substring of the error the server must report; empty means Object is valid.
	Want string
}

// Check runs the case against the embedded CRDs and returns an error when the outcome differs
// from the expectation: a valid object refused, an invalid one accepted, or refused without
// the expected message.
func Check(c Case) error {
	_, err := Apply(c)
	return err
}

// Apply runs the case like Check and also returns the object as it would be stored: unknown
// fields dropped and defaults applied.
func Apply(c Case) (map[string]interface{}, error) {
	obj, err := Decode(c.Object)
	if err != nil {
		return nil, fmt.Errorf("object: %w", err)
	}
	// The kind's group is the apiVersion's (a wrong version is then the validator's to report);
	// karpenter.sh when the apiVersion names none.
	group := "karpenter.sh"
	if gv, err := schema.ParseGroupVersion(fmt.Sprint(obj["apiVersion"])); err == nil && gv.Group != "" {
		group = gv.Group
	}
	v, err := ValidatorForGroupKind(group, fmt.Sprint(obj["kind"]))
	if err != nil {
		return nil, err
	}
	var got string
	if c.Old == "" {
		if errs := v.Create(obj); len(errs) > 0 {
			got = errs.ToAggregate().Error()
		}
	} else {
		old, err := Decode(c.Old)
		if err != nil {
			return nil, fmt.Errorf("old object: %w", err)
		}
		if errs := v.Update(obj, old); len(errs) > 0 {
			got = errs.ToAggregate().Error()
		}
	}
	switch {
	case c.Want == "" && got != "":
		return obj, fmt.Errorf("refused a valid object: %s", got)
	case c.Want != "" && got == "":
		return obj, fmt.Errorf("accepted an invalid object; want an error containing %q", c.Want)
	case c.Want != "" && !strings.Contains(got, c.Want):
		return obj, fmt.Errorf("error does not contain %q: %s", c.Want, got)
	}
	return obj, nil
}

// Decode parses a YAML or JSON manifest the way the API server decodes JSON: integral numbers
// become int64.
func Decode(manifest string) (map[string]interface{}, error) {
	b, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		return nil, err
	}
	obj := map[string]interface{}{}
	if err := utiljson.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// ValidatorFor returns the Validator of a karpenter.sh kind, built from the embedded CRDs.
func ValidatorFor(kind string) (*Validator, error) {
	return ValidatorForGroupKind("karpenter.sh", kind)
}

// ValidatorForGroupKind returns the Validator of any kind whose CRD is embedded in package crds.
func ValidatorForGroupKind(group, kind string) (*Validator, error) {
	return validation.ForGroupKind(schema.GroupKind{Group: group, Kind: kind})
}
