package v1alpha1

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Offering classes of ReservedInstances.
const (
	OfferingClassStandard    = "Standard"
	OfferingClassConvertible = "Convertible"
)

// The bounds the CRD's markers set, checked again by Validate.
const (
	// maxReservedInstances is the largest ReservedInstances count.
	maxReservedInstances = 100000
	// maxDiscounts is the most rates a Compute Savings Plan may list.
	maxDiscounts = 1000
	// maxNameLength bounds families, instance types, regions and zones, in characters.
	maxNameLength = 63
)

// decimal is the pattern of every decimal field: digits, optionally a point and more digits.
var decimal = regexp.MustCompile(`^\d+(\.\d+)?$`)

// Validate checks a Commitment as the API server checks it against its CRD, so that one read
// from a file (tenon plan, simulate, explain) or built in Go is refused for the same reasons a
// cluster would refuse it: exactly one of the three kinds; every decimal field a plain decimal
// ("12.5", no sign, exponent or unit); names within their lengths; count from 1 to 100000; end
// after start; offeringClass Standard, Convertible or unset. It also refuses a percentage above
// 100, which no marker expresses. The error is an aggregate of field errors, each naming the
// field by its path ("spec.computeSavingsPlan.discounts[2].percent"); nil when valid.
func Validate(c *Commitment) error {
	return validateSpec(&c.Spec, field.NewPath("spec")).ToAggregate()
}

func validateSpec(s *CommitmentSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if s.ComputeSavingsPlan != nil {
		set = append(set, "computeSavingsPlan")
		errs = append(errs, validateComputeSavingsPlan(s.ComputeSavingsPlan, path.Child("computeSavingsPlan"))...)
	}
	if s.EC2InstanceSavingsPlan != nil {
		set = append(set, "ec2InstanceSavingsPlan")
		errs = append(errs, validateEC2InstanceSavingsPlan(s.EC2InstanceSavingsPlan, path.Child("ec2InstanceSavingsPlan"))...)
	}
	if s.ReservedInstances != nil {
		set = append(set, "reservedInstances")
		errs = append(errs, validateReservedInstances(s.ReservedInstances, path.Child("reservedInstances"))...)
	}
	const one = "exactly one of computeSavingsPlan, ec2InstanceSavingsPlan and reservedInstances must be set"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(path, one))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, strings.Join(set, ", "), one))
	}
	// Compared as stored: to the second, as the API server's rule sees them.
	if s.Start != nil && s.End != nil {
		start, end := s.Start.Rfc3339Copy(), s.End.Rfc3339Copy()
		if !end.After(start.Time) {
			errs = append(errs, field.Invalid(path.Child("end"), end.UTC().Format(time.RFC3339),
				fmt.Sprintf("end must be after start (%s)", start.UTC().Format(time.RFC3339))))
		}
	}
	return errs
}

func validateComputeSavingsPlan(p *ComputeSavingsPlan, path *field.Path) field.ErrorList {
	errs := validateDecimal(p.HourlyCommitment, path.Child("hourlyCommitment"), true)
	errs = append(errs, validatePercent(p.DefaultDiscount, path.Child("defaultDiscount"))...)
	if len(p.Discounts) > maxDiscounts {
		errs = append(errs, field.TooMany(path.Child("discounts"), len(p.Discounts), maxDiscounts))
	}
	for i := range p.Discounts {
		d, dp := &p.Discounts[i], path.Child("discounts").Index(i)
		errs = append(errs, validateName(d.Family, dp.Child("family"), true)...)
		errs = append(errs, validateName(d.Region, dp.Child("region"), false)...)
		errs = append(errs, validatePercent(d.Percent, dp.Child("percent"))...)
	}
	return errs
}

func validateEC2InstanceSavingsPlan(p *EC2InstanceSavingsPlan, path *field.Path) field.ErrorList {
	errs := validateDecimal(p.HourlyCommitment, path.Child("hourlyCommitment"), true)
	errs = append(errs, validateName(p.Family, path.Child("family"), true)...)
	errs = append(errs, validateName(p.Region, path.Child("region"), false)...)
	return append(errs, validatePercent(p.Discount, path.Child("discount"))...)
}

func validateReservedInstances(r *ReservedInstances, path *field.Path) field.ErrorList {
	errs := validateName(r.InstanceType, path.Child("instanceType"), true)
	if r.Count < 1 || r.Count > maxReservedInstances {
		errs = append(errs, field.Invalid(path.Child("count"), r.Count, fmt.Sprintf("must be from 1 to %d", maxReservedInstances)))
	}
	errs = append(errs, validateName(r.Zone, path.Child("zone"), false)...)
	errs = append(errs, validateName(r.Region, path.Child("region"), false)...)
	switch r.OfferingClass {
	case "", OfferingClassStandard, OfferingClassConvertible:
	default:
		errs = append(errs, field.NotSupported(path.Child("offeringClass"), r.OfferingClass, []string{OfferingClassStandard, OfferingClassConvertible}))
	}
	return append(errs, validateDecimal(r.EffectiveHourlyPrice, path.Child("effectiveHourlyPrice"), false)...)
}

// validateDecimal checks a decimal field; an empty one is an error only when required.
func validateDecimal(s string, path *field.Path, required bool) field.ErrorList {
	switch {
	case s == "" && required:
		return field.ErrorList{field.Required(path, `a decimal such as "12.5"`)}
	case s != "" && !decimal.MatchString(s):
		return field.ErrorList{field.Invalid(path, s, `must be a decimal such as "12.5": digits, optionally a point and more digits`)}
	}
	return nil
}

// validatePercent checks a required decimal that is a percentage: from 0 to 100.
func validatePercent(s string, path *field.Path) field.ErrorList {
	if errs := validateDecimal(s, path, true); len(errs) > 0 {
		return errs
	}
	if !atMost100(s) {
		return field.ErrorList{field.Invalid(path, s, "must be a percentage from 0 to 100")}
	}
	return nil
}

// atMost100 reports whether a decimal that matches the pattern is at most 100, exactly: no
// floating point, so "100.0000000000000001" is over.
func atMost100(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	whole = strings.TrimLeft(whole, "0")
	switch {
	case len(whole) < 3:
		return true
	case len(whole) > 3 || whole > "100":
		return false
	}
	return strings.Trim(frac, "0") == "" // exactly 100
}

// validateName checks a family, instance type, region or zone: at most 63 characters, and
// not empty when required.
func validateName(s string, path *field.Path, required bool) field.ErrorList {
	switch {
	case s == "" && required:
		return field.ErrorList{field.Required(path, "")}
	case utf8.RuneCountInString(s) > maxNameLength:
		return field.ErrorList{field.TooLong(path, s, maxNameLength)}
	}
	return nil
}
