package validation

import (
	"context"
	"fmt"
	"math"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// Validator validates and defaults objects of one served version of a CRD. Its methods work on
// objects decoded the way the API server decodes JSON (integral numbers as int64), change them
// in place as documented, and are safe for concurrent use on different objects.
type Validator struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	structural *structuralschema.Structural
	schema     apivalidation.SchemaValidator
	cel        *cel.Validator
	scale      *apiextensions.CustomResourceSubresourceScale
}

// NewValidator builds a Validator for the named served version of crd, or for its storage
// version when version is empty. It fails if the CRD itself would be refused by the API server
// (see ValidateCRD).
func NewValidator(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Validator, error) {
	internal, err := toInternal(crd)
	if err != nil {
		return nil, err
	}
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
		return nil, fmt.Errorf("CustomResourceDefinition %s is invalid: %w", crd.Name, errs.ToAggregate())
	}
	for _, v := range internal.Spec.Versions {
		if version == "" && v.Storage || version != "" && v.Name == version && v.Served {
			return newValidator(internal, v.Name)
		}
	}
	if version == "" {
		return nil, fmt.Errorf("%s has no storage version", crd.Name)
	}
	return nil, fmt.Errorf("%s does not serve version %s", crd.Name, version)
}

func newValidator(crd *apiextensions.CustomResourceDefinition, version string) (*Validator, error) {
	// The internal form keeps a schema shared by all versions at the top level.
	validation, err := apiextensions.GetSchemaForVersion(crd, version)
	if err != nil || validation == nil || validation.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("%s %s: no schema (%v)", crd.Name, version, err)
	}
	s, err := structuralschema.NewStructural(validation.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", crd.Name, version, err)
	}
	sv, _, err := apivalidation.NewSchemaValidator(validation.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", crd.Name, version, err)
	}
	val := &Validator{
		gvk:        schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind},
		namespaced: crd.Spec.Scope == apiextensions.NamespaceScoped,
		structural: s,
		schema:     sv,
		cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
	}
	subresources, err := apiextensions.GetSubresourcesForVersion(crd, version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", crd.Name, version, err)
	}
	if subresources != nil {
		val.scale = subresources.Scale
	}
	return val, nil
}

// ValidateCRD returns the errors the API server would report when creating crd: a schema that
// is not structural, a default that does not validate, a CEL rule that does not compile or
// whose estimated cost is over the limit.
func ValidateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	internal, err := toInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal)
}

func toInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	crd = crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = []string{v.Name}
		}
	}
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return nil, err
	}
	return internal, nil
}

// GroupVersionKind returns the group, version and kind the Validator checks.
func (v *Validator) GroupVersionKind() schema.GroupVersionKind { return v.gvk }

// Kind returns the kind the Validator checks.
func (v *Validator) Kind() string { return v.gvk.Kind }

// Namespaced reports whether objects of the kind live in a namespace.
func (v *Validator) Namespaced() bool { return v.namespaced }

// Default applies the schema's defaults to obj in place, as the API server does when it decodes
// an object.
func (v *Validator) Default(obj map[string]interface{}) {
	defaulting.PruneNonNullableNullsWithoutDefaults(obj, v.structural)
	defaulting.Default(obj, v.structural)
}

// Create checks obj as the API server checks a create request. It turns obj into the stored
// form (unknown fields dropped, defaults applied) and returns every error the server would
// report, unknown fields included.
func (v *Validator) Create(obj map[string]interface{}) field.ErrorList {
	errs := v.admit(obj)
	errs = append(errs, v.validate(obj, nil)...)
	return errs
}

// Update checks the change from old to obj as the API server checks an update request; both are
// defaulted in place. CEL transition rules (those using oldSelf) run, and errors on values that
// did not change are dropped, as the server's validation ratcheting does.
func (v *Validator) Update(obj, old map[string]interface{}) field.ErrorList {
	v.Default(old)
	errs := v.admit(obj)
	errs = append(errs, v.validate(obj, old)...)
	return errs
}

// admit mirrors decoding with strict field validation: unknown fields are reported and
// dropped, then defaults are applied.
func (v *Validator) admit(obj map[string]interface{}) field.ErrorList {
	var errs field.ErrorList
	for _, path := range pruning.PruneWithOptions(obj, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, field.Invalid(nil, nil, fmt.Sprintf("unknown field %q", path)))
	}
	v.Default(obj)
	return errs
}

func (v *Validator) validate(obj, old map[string]interface{}) field.ErrorList {
	ctx := context.Background()
	errs := v.validateTypeMeta(obj)
	if len(errs) > 0 {
		return errs
	}
	var celOpts []cel.Option
	if old != nil {
		correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: v.structural})
		celOpts = append(celOpts, cel.WithRatcheting(correlated))
		errs = append(errs, apivalidation.ValidateCustomResourceUpdate(nil, obj, old, v.schema, apivalidation.WithRatcheting(correlated))...)
	} else {
		errs = append(errs, apivalidation.ValidateCustomResource(nil, obj, v.schema)...)
	}
	errs = append(errs, v.validateScale(obj)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, v.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	if blocking(errs) {
		// The server skips CEL rules when the object is malformed in these ways.
		return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid"))
	}
	var oldObj interface{}
	if old != nil {
		oldObj = old
	}
	celErrs, _ := v.cel.Validate(ctx, nil, v.structural, obj, oldObj, celconfig.RuntimeCELCostBudget, celOpts...)
	return append(errs, celErrs...)
}

func (v *Validator) validateTypeMeta(obj map[string]interface{}) field.ErrorList {
	u := unstructured.Unstructured{Object: obj}
	var errs field.ErrorList
	if want := v.gvk.GroupVersion().String(); u.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+want))
	}
	if u.GetKind() != v.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), "must be "+v.gvk.Kind))
	}
	return errs
}

// validateScale mirrors the checks the server makes on the scale subresource's replica paths.
func (v *Validator) validateScale(obj map[string]interface{}) field.ErrorList {
	if v.scale == nil {
		return nil
	}
	var errs field.ErrorList
	for _, path := range []string{v.scale.SpecReplicasPath, v.scale.StatusReplicasPath} {
		n, _, err := unstructured.NestedInt64(obj, strings.Split(strings.TrimPrefix(path, "."), ".")...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(path), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(path), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %d", math.MaxInt32)))
		}
	}
	return errs
}

func blocking(errs field.ErrorList) bool {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}
