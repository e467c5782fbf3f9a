package apitest

import (
	"fmt"
	"strings"
)

// The Commitments the cases start from, one of each kind. The cases patch them.
const (
	// ComputeSavingsPlanCommitment is a three-year Compute Savings Plan with a default rate and
	// two family rates, one of them for a single region.
	ComputeSavingsPlanCommitment = `
apiVersion: tenon.sh/v1alpha1
kind: Commitment
metadata:
  name: compute-plan
spec:
  start: "2026-01-01T00:00:00Z"
  end: "2029-01-01T00:00:00Z"
  computeSavingsPlan:
    hourlyCommitment: "12.50"
    defaultDiscount: "27.5"
    discounts:
    - {family: c7g, percent: "31"}
    - {family: m7i, region: eu-west-1, percent: "29.75"}
`
	// EC2InstanceSavingsPlanCommitment is an EC2 Instance Savings Plan for one family in one
	// region, with no end.
	EC2InstanceSavingsPlanCommitment = `
apiVersion: tenon.sh/v1alpha1
kind: Commitment
metadata:
  name: m7i-plan
spec:
  ec2InstanceSavingsPlan:
    hourlyCommitment: "4.00"
    family: m7i
    region: us-east-1
    discount: "42"
`
	// ZonalReservedInstancesCommitment reserves four instances of one type in one zone, with
	// their amortised price.
	ZonalReservedInstancesCommitment = `
apiVersion: tenon.sh/v1alpha1
kind: Commitment
metadata:
  name: m5-zonal
spec:
  end: "2027-06-30T00:00:00Z"
  reservedInstances:
    instanceType: m5.xlarge
    count: 4
    zone: us-east-1a
    region: us-east-1
    offeringClass: Standard
    effectiveHourlyPrice: "0.121"
`
	// RegionalReservedInstancesCommitment reserves ten instances in a region, size-flexible
	// within their family, of the Convertible class.
	RegionalReservedInstancesCommitment = `
apiVersion: tenon.sh/v1alpha1
kind: Commitment
metadata:
  name: c6i-regional
spec:
  reservedInstances:
    instanceType: c6i.2xlarge
    count: 10
    region: us-east-1
    offeringClass: Convertible
`
)

// exactlyOneKind is the message of the rule that a Commitment is of exactly one kind.
const exactlyOneKind = "exactly one of computeSavingsPlan, ec2InstanceSavingsPlan and reservedInstances must be set"

// csp patches the Compute Savings Plan's spec.computeSavingsPlan.
func csp(p string) string {
	return patch(ComputeSavingsPlanCommitment, fmt.Sprintf("{spec: {computeSavingsPlan: %s}}", p))
}

// ec2sp patches the EC2 Instance Savings Plan's spec.ec2InstanceSavingsPlan.
func ec2sp(p string) string {
	return patch(EC2InstanceSavingsPlanCommitment, fmt.Sprintf("{spec: {ec2InstanceSavingsPlan: %s}}", p))
}

// ri patches the zonal Reserved Instances' spec.reservedInstances.
func ri(p string) string {
	return patch(ZonalReservedInstancesCommitment, fmt.Sprintf("{spec: {reservedInstances: %s}}", p))
}

// InvalidCommitments returns Commitments the API server must refuse, each with a substring of
// the message it must give.
func InvalidCommitments() []Case {
	manyDiscounts := make([]string, 1001)
	for i := range manyDiscounts {
		manyDiscounts[i] = fmt.Sprintf("{family: f%d, percent: '10'}", i)
	}
	long := strings.Repeat("a", 64)
	return []Case{
		// Type and shape.
		{Name: "wrong apiVersion", Object: patch(ComputeSavingsPlanCommitment, `{apiVersion: tenon.sh/v1beta1}`), Want: "must be tenon.sh/v1alpha1"},
		{Name: "no spec", Object: patch(ComputeSavingsPlanCommitment, `{spec: null}`), Want: "spec: Required value"},
		{Name: "unknown field", Object: csp(`{term: 3y}`), Want: `unknown field "spec.computeSavingsPlan.term"`},

		// Exactly one kind.
		{Name: "no kind", Object: csp(`null`), Want: exactlyOneKind},
		{Name: "two kinds", Object: patch(ComputeSavingsPlanCommitment, `{spec: {reservedInstances: {instanceType: m5.large, count: 1}}}`), Want: exactlyOneKind},
		{Name: "all three kinds", Object: patch(ComputeSavingsPlanCommitment, `{spec: {reservedInstances: {instanceType: m5.large, count: 1}, ec2InstanceSavingsPlan: {hourlyCommitment: '1', family: m5, discount: '40'}}}`), Want: exactlyOneKind},

		// Hours.
		{Name: "end before start", Object: patch(ComputeSavingsPlanCommitment, `{spec: {end: '2025-12-31T23:59:59Z'}}`), Want: "end must be after start"},
		{Name: "end equal to start", Object: patch(ComputeSavingsPlanCommitment, `{spec: {end: '2026-01-01T00:00:00Z'}}`), Want: "end must be after start"},
		{Name: "start not a time", Object: patch(ComputeSavingsPlanCommitment, `{spec: {start: next year}}`), Want: "spec.start"},

		// Decimals.
		{Name: "hourlyCommitment with a comma", Object: csp(`{hourlyCommitment: '12,50'}`), Want: mismatch("spec.computeSavingsPlan.hourlyCommitment")},
		{Name: "hourlyCommitment with a currency sign", Object: csp(`{hourlyCommitment: '$12.50'}`), Want: mismatch("spec.computeSavingsPlan.hourlyCommitment")},
		{Name: "hourlyCommitment empty", Object: csp(`{hourlyCommitment: ''}`), Want: mismatch("spec.computeSavingsPlan.hourlyCommitment")},
		{Name: "hourlyCommitment missing", Object: csp(`{hourlyCommitment: null}`), Want: "spec.computeSavingsPlan.hourlyCommitment: Required value"},
		{Name: "defaultDiscount negative", Object: csp(`{defaultDiscount: '-5'}`), Want: mismatch("spec.computeSavingsPlan.defaultDiscount")},
		{Name: "defaultDiscount with a percent sign", Object: csp(`{defaultDiscount: '27.5%'}`), Want: mismatch("spec.computeSavingsPlan.defaultDiscount")},
		{Name: "defaultDiscount missing", Object: csp(`{defaultDiscount: null}`), Want: "spec.computeSavingsPlan.defaultDiscount: Required value"},
		{Name: "family percent with a trailing point", Object: csp(`{discounts: [{family: c7g, percent: '30.'}]}`), Want: mismatch("spec.computeSavingsPlan.discounts[0].percent")},
		{Name: "EC2 plan discount in exponent form", Object: ec2sp(`{discount: '4e1'}`), Want: mismatch("spec.ec2InstanceSavingsPlan.discount")},
		{Name: "EC2 plan hourlyCommitment with a leading point", Object: ec2sp(`{hourlyCommitment: '.5'}`), Want: mismatch("spec.ec2InstanceSavingsPlan.hourlyCommitment")},
		{Name: "effectiveHourlyPrice a word", Object: ri(`{effectiveHourlyPrice: free}`), Want: mismatch("spec.reservedInstances.effectiveHourlyPrice")},

		// Names and lists.
		{Name: "family rate without a family", Object: csp(`{discounts: [{percent: '30'}]}`), Want: "spec.computeSavingsPlan.discounts[0].family: Required value"},
		{Name: "family rate with an empty family", Object: csp(`{discounts: [{family: '', percent: '30'}]}`), Want: "spec.computeSavingsPlan.discounts[0].family"},
		{Name: "more than 1000 family rates", Object: csp(fmt.Sprintf("{discounts: %s}", list(manyDiscounts))), Want: "must have at most 1000 items"},
		{Name: "EC2 plan without a family", Object: ec2sp(`{family: null}`), Want: "spec.ec2InstanceSavingsPlan.family: Required value"},
		{Name: "defaultDiscount over 100", Object: csp(`{defaultDiscount: '100.5'}`), Want: "spec.computeSavingsPlan.defaultDiscount: Invalid value"},
		{Name: "family percent over 100", Object: csp(`{discounts: [{family: c7g, percent: '150'}]}`), Want: "spec.computeSavingsPlan.discounts[0].percent: Invalid value"},
		{Name: "EC2 plan discount over 100", Object: ec2sp(`{discount: '101'}`), Want: "spec.ec2InstanceSavingsPlan.discount: Invalid value"},
		{Name: "EC2 plan without a discount", Object: ec2sp(`{discount: null}`), Want: "spec.ec2InstanceSavingsPlan.discount: Required value"},
		{Name: "EC2 plan region longer than 63", Object: ec2sp(fmt.Sprintf("{region: %s}", long)), Want: "spec.ec2InstanceSavingsPlan.region"},
		{Name: "reservation without an instance type", Object: ri(`{instanceType: null}`), Want: "spec.reservedInstances.instanceType: Required value"},
		{Name: "reservation zone longer than 63", Object: ri(fmt.Sprintf("{zone: %s}", long)), Want: "spec.reservedInstances.zone"},

		// Count and class.
		{Name: "count 0", Object: ri(`{count: 0}`), Want: "should be greater than or equal to 1"},
		{Name: "count negative", Object: ri(`{count: -4}`), Want: "should be greater than or equal to 1"},
		{Name: "count above 100000", Object: ri(`{count: 100001}`), Want: "should be less than or equal to 100000"},
		{Name: "count missing", Object: ri(`{count: null}`), Want: "spec.reservedInstances.count: Required value"},
		{Name: "count a string", Object: ri(`{count: '4'}`), Want: "spec.reservedInstances.count"},
		{Name: "offeringClass Scheduled", Object: ri(`{offeringClass: Scheduled}`), Want: `Unsupported value: "Scheduled"`},
		{Name: "offeringClass lower-case", Object: ri(`{offeringClass: standard}`), Want: `Unsupported value: "standard"`},
	}
}

// ValidCommitments returns Commitments the API server must accept.
func ValidCommitments() []Case {
	return []Case{
		{Name: "Compute Savings Plan", Object: ComputeSavingsPlanCommitment},
		{Name: "EC2 Instance Savings Plan", Object: EC2InstanceSavingsPlanCommitment},
		{Name: "zonal Reserved Instances", Object: ZonalReservedInstancesCommitment},
		{Name: "regional Reserved Instances", Object: RegionalReservedInstancesCommitment},
		{Name: "no start and no end", Object: patch(ComputeSavingsPlanCommitment, `{spec: {start: null, end: null}}`)},
		{Name: "only a start", Object: patch(ComputeSavingsPlanCommitment, `{spec: {end: null}}`)},
		{Name: "end one second after start", Object: patch(ComputeSavingsPlanCommitment, `{spec: {end: '2026-01-01T00:00:01Z'}}`)},
		{Name: "no family rates", Object: csp(`{discounts: null}`)},
		{Name: "percentages 0 and 100", Object: csp(`{defaultDiscount: '0', discounts: [{family: c7g, percent: '100'}, {family: r7g, percent: '100.000'}]}`)},
		{Name: "many decimals and leading zeros", Object: ec2sp(`{hourlyCommitment: '0004.000001', discount: '07.125'}`)},
		{Name: "EC2 plan without a region", Object: ec2sp(`{region: null}`)},
		{Name: "reservation of one, without a class or a price", Object: ri(`{count: 1, offeringClass: null, effectiveHourlyPrice: null}`)},
		{Name: "reservation of 100000", Object: ri(`{count: 100000}`)},
		{Name: "names of 63 characters", Object: ri(fmt.Sprintf("{instanceType: %s, zone: %[1]s, region: %[1]s}", strings.Repeat("a", 63)))},
		{Name: "status as tenon writes it", Object: patch(ZonalReservedInstancesCommitment, `{status: {kind: ReservedInstances, utilization: 87.5%, coveredInstances: 3, `+
			`conditions: [{type: Active, status: "True", reason: Active, message: "", lastTransitionTime: "2026-03-01T09:58:00Z"}]}}`)},
	}
}
