package validation

import (
	"encoding/json"
	"fmt"
	"reflect"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// scheme names the kinds of typed objects that come without TypeMeta.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// Default applies the defaults of obj's CRD schema to obj in place, as the API server does when
// it decodes an object. obj is a typed object of pkg/apis or an *unstructured.Unstructured;
// its kind comes from its TypeMeta, or for the types of pkg/apis/v1 from their Go type. A typed
// object is defaulted through its JSON encoding, so a field whose zero value the encoding does
// not omit (a NillableDuration means Never) keeps its value, as it would if a client sent it;
// its TypeMeta is left as it was. The error wraps ErrNoCRD when no embedded CRD serves the kind.
func Default(obj runtime.Object) error {
	v, m, err := lookup(obj)
	if err != nil {
		return err
	}
	v.Default(m)
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return nil // defaulted in place
	}
	return fromMap(m, obj)
}

// Validate returns every error the API server would report for creating obj, or for updating
// old to obj when old is not nil: unknown fields, OpenAPI schema violations, metadata and
// list-type errors and failed CEL rules (transition rules and ratcheting on update). It checks
// the object as the server would store it, defaults applied, and changes neither argument.
// When no embedded CRD serves the kind, or the object cannot be encoded, the list holds one
// error on the field "kind" or an internal error saying so.
func Validate(obj, old runtime.Object) field.ErrorList {
	v, m, err := lookup(obj)
	if err != nil {
		if gvk, kindErr := kindOf(obj); kindErr == nil {
			return field.ErrorList{field.Invalid(field.NewPath("kind"), gvk.Kind, err.Error())}
		}
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = runtime.DeepCopyJSON(u.Object)
	}
	if old == nil {
		return v.Create(m)
	}
	oldV, oldM, err := lookup(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("old object: %w", err))}
	}
	if oldV != v {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), oldV.gvk.Kind, "old object is a "+oldV.gvk.String()+", not a "+v.gvk.String())}
	}
	if u, ok := old.(*unstructured.Unstructured); ok {
		oldM = runtime.DeepCopyJSON(u.Object)
	}
	return v.Update(m, oldM)
}

// lookup returns obj's Validator and obj as a map: the object itself for an Unstructured, a
// fresh encoding with apiVersion and kind set for a typed object.
func lookup(obj runtime.Object) (*Validator, map[string]interface{}, error) {
	if rv := reflect.ValueOf(obj); obj == nil || rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, nil, fmt.Errorf("validation: %T is not a pointer to an object", obj)
	}
	gvk, err := kindOf(obj)
	if err != nil {
		return nil, nil, err
	}
	v, err := For(gvk)
	if err != nil {
		return nil, nil, err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return v, u.Object, nil
	}
	m, err := toMap(obj)
	if err != nil {
		return nil, nil, err
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return v, m, nil
}

func kindOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		return gvk, nil
	}
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("validation: %T has no apiVersion and kind: %w", obj, err)
	}
	return gvks[0], nil
}

// toMap encodes obj as the API server decodes JSON: integral numbers become int64.
func toMap(obj runtime.Object) (map[string]interface{}, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("validation: encoding %T: %w", obj, err)
	}
	m := map[string]interface{}{}
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("validation: decoding %T: %w", obj, err)
	}
	return m, nil
}

// fromMap replaces the content of the typed object obj with m, keeping obj's TypeMeta.
func fromMap(m map[string]interface{}, obj runtime.Object) error {
	kind := obj.GetObjectKind().GroupVersionKind()
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("validation: encoding %T: %w", obj, err)
	}
	fresh := reflect.New(reflect.TypeOf(obj).Elem())
	if err := json.Unmarshal(b, fresh.Interface()); err != nil {
		return fmt.Errorf("validation: decoding %T: %w", obj, err)
	}
	reflect.ValueOf(obj).Elem().Set(fresh.Elem())
	obj.GetObjectKind().SetGroupVersionKind(kind)
	return nil
}
