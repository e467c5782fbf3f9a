package apitest

import (
	"github.com/tenon-sh/tenon/pkg/apis/validation"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validator validates and defaults objects of one served version of a CRD; see
// validation.Validator.
type Validator = validation.Validator

// NewValidator builds a Validator for the storage version of crd. It fails if the CRD itself
// would be refused by the API server (see ValidateCRD).
func NewValidator(crd *apiextensionsv1.CustomResourceDefinition) (*Validator, error) {
	return validation.NewValidator(crd, "")
}

// ValidateCRD returns the errors the API server would report when creating crd: a schema that
// is not structural, a default that does not validate, a CEL rule that does not compile or
// whose estimated cost is over the limit.
func ValidateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	return validation.ValidateCRD(crd)
}
