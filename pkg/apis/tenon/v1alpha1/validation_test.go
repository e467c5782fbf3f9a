package v1alpha1_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	"github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
)

// --- the CRD (offline, as the API server validates) ---

func runCases(t *testing.T, cases []apitest.Case) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Errorf("duplicate case name %q", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			if err := apitest.Check(c); err != nil {
				t.Errorf("%v\n%s", err, c.Object)
			}
		})
	}
}

func TestInvalidCommitments(t *testing.T) {
	cases := apitest.InvalidCommitments()
	if len(cases) < 30 {
		t.Errorf("only %d invalid cases", len(cases))
	}
	runCases(t, cases)
}

func TestValidCommitments(t *testing.T) { runCases(t, apitest.ValidCommitments()) }

// The CRD defaults a reservation's offering class to Standard.
func TestCRDDefaultsOfferingClass(t *testing.T) {
	manifest := strings.Replace(apitest.RegionalReservedInstancesCommitment, "    offeringClass: Convertible\n", "", 1)
	if strings.Contains(manifest, "offeringClass") {
		t.Fatalf("the base manifest changed:\n%s", manifest)
	}
	obj, err := apitest.Apply(apitest.Case{Object: manifest})
	if err != nil {
		t.Fatal(err)
	}
	c := typed(t, obj)
	if got := c.Spec.ReservedInstances.OfferingClass; got != v1alpha1.OfferingClassStandard {
		t.Errorf("offeringClass defaulted to %q, want Standard", got)
	}
}

// --- Validate agrees with the CRD ---

// Every case of the API's table that decodes into the Go type is refused by Validate exactly
// when the CRD refuses it; those that do not decode (another apiVersion, an unknown field, a
// count that is a string, a start that is no time) are ones the CRD refuses.
func TestValidateAgreesWithTheCRD(t *testing.T) {
	cases := append(apitest.InvalidCommitments(), apitest.ValidCommitments()...)
	decoded := 0
	for _, c := range cases {
		obj, err := apitest.Decode(c.Object)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if obj["apiVersion"] != v1alpha1.SchemeGroupVersion.String() {
			if c.Want == "" {
				t.Errorf("%s: a valid case of apiVersion %v", c.Name, obj["apiVersion"])
			}
			continue
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var commitment v1alpha1.Commitment
		strict, err := sigsjson.UnmarshalStrict(b, &commitment, sigsjson.DisallowUnknownFields)
		if err != nil || len(strict) > 0 {
			if c.Want == "" {
				t.Errorf("%s: a valid case does not decode: %v %v", c.Name, err, strict)
			}
			continue
		}
		decoded++
		err = v1alpha1.Validate(&commitment)
		switch {
		case c.Want == "" && err != nil:
			t.Errorf("%s: Validate refused what the CRD accepts: %v", c.Name, err)
		case c.Want != "" && err == nil:
			t.Errorf("%s: Validate accepted what the CRD refuses (%q)", c.Name, c.Want)
		}
	}
	if decoded < len(cases)-5 {
		t.Errorf("only %d of %d cases decode into the Go type", decoded, len(cases))
	}
}

// --- Validate, rule by rule ---

func TestValidate(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(start.Add(d)); return &t }
	csp := func(mut func(*v1alpha1.ComputeSavingsPlan)) v1alpha1.CommitmentSpec {
		p := &v1alpha1.ComputeSavingsPlan{HourlyCommitment: "12.50", DefaultDiscount: "27.5",
			Discounts: []v1alpha1.Discount{{Family: "c7g", Percent: "31"}, {Family: "m7i", Region: "eu-west-1", Percent: "29.75"}}}
		if mut != nil {
			mut(p)
		}
		return v1alpha1.CommitmentSpec{ComputeSavingsPlan: p}
	}
	ec2 := func(mut func(*v1alpha1.EC2InstanceSavingsPlan)) v1alpha1.CommitmentSpec {
		p := &v1alpha1.EC2InstanceSavingsPlan{HourlyCommitment: "4.00", Family: "m7i", Region: "us-east-1", Discount: "42"}
		if mut != nil {
			mut(p)
		}
		return v1alpha1.CommitmentSpec{EC2InstanceSavingsPlan: p}
	}
	ri := func(mut func(*v1alpha1.ReservedInstances)) v1alpha1.CommitmentSpec {
		r := &v1alpha1.ReservedInstances{InstanceType: "m5.xlarge", Count: 4, Zone: "us-east-1a", Region: "us-east-1",
			OfferingClass: v1alpha1.OfferingClassStandard, EffectiveHourlyPrice: "0.121"}
		if mut != nil {
			mut(r)
		}
		return v1alpha1.CommitmentSpec{ReservedInstances: r}
	}
	withHours := func(s v1alpha1.CommitmentSpec, from, to *metav1.Time) v1alpha1.CommitmentSpec {
		s.Start, s.End = from, to
		return s
	}
	long := strings.Repeat("a", 64)
	discounts := make([]v1alpha1.Discount, 1001)
	for i := range discounts {
		discounts[i] = v1alpha1.Discount{Family: fmt.Sprintf("f%d", i), Percent: "10"}
	}
	const one = "exactly one of computeSavingsPlan, ec2InstanceSavingsPlan and reservedInstances must be set"

	for _, c := range []struct {
		name string
		spec v1alpha1.CommitmentSpec
		// want are the fields of the errors ("" when valid), each with a substring of its
		// message after a colon.
		want []string
	}{
		// Exactly one kind.
		{"Compute Savings Plan", csp(nil), nil},
		{"EC2 Instance Savings Plan", ec2(nil), nil},
		{"zonal Reserved Instances", ri(nil), nil},
		{"regional Reserved Instances", ri(func(r *v1alpha1.ReservedInstances) {
			r.Zone, r.OfferingClass, r.EffectiveHourlyPrice = "", v1alpha1.OfferingClassConvertible, ""
		}), nil},
		{"no kind", v1alpha1.CommitmentSpec{}, []string{"spec:" + one}},
		{"two kinds", v1alpha1.CommitmentSpec{ComputeSavingsPlan: csp(nil).ComputeSavingsPlan, ReservedInstances: ri(nil).ReservedInstances},
			[]string{`spec:"computeSavingsPlan, reservedInstances"`}},
		{"three kinds", v1alpha1.CommitmentSpec{ComputeSavingsPlan: csp(nil).ComputeSavingsPlan, EC2InstanceSavingsPlan: ec2(nil).EC2InstanceSavingsPlan, ReservedInstances: ri(nil).ReservedInstances},
			[]string{"spec:" + one}},
		{"an invalid second kind is reported too", v1alpha1.CommitmentSpec{ComputeSavingsPlan: csp(nil).ComputeSavingsPlan, ReservedInstances: ri(func(r *v1alpha1.ReservedInstances) { r.Count = 0 }).ReservedInstances},
			[]string{"spec.reservedInstances.count:must be from 1 to 100000", "spec:" + one}},

		// Hours.
		{"start and end", withHours(csp(nil), at(0), at(3*365*24*time.Hour)), nil},
		{"only a start", withHours(csp(nil), at(0), nil), nil},
		{"only an end", withHours(csp(nil), nil, at(0)), nil},
		{"end one second after start", withHours(csp(nil), at(0), at(time.Second)), nil},
		{"end equal to start", withHours(csp(nil), at(0), at(0)), []string{"spec.end:end must be after start (2026-01-01T00:00:00Z)"}},
		{"end before start", withHours(csp(nil), at(0), at(-time.Hour)), []string{`spec.end:"2025-12-31T23:00:00Z"`}},
		{"end within the second of start, as stored", withHours(csp(nil), at(0), at(500*time.Millisecond)), []string{"spec.end:end must be after start"}},

		// Decimals.
		{"hourly commitment with many decimals", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.HourlyCommitment = "0012.000001" }), nil},
		{"hourly commitment with a comma", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.HourlyCommitment = "12,50" }), []string{`spec.computeSavingsPlan.hourlyCommitment:"12,50"`}},
		{"hourly commitment with a sign", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.HourlyCommitment = "+4" }), []string{"spec.ec2InstanceSavingsPlan.hourlyCommitment:must be a decimal"}},
		{"hourly commitment with a leading point", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.HourlyCommitment = ".5" }), []string{"spec.ec2InstanceSavingsPlan.hourlyCommitment:must be a decimal"}},
		{"hourly commitment in exponent form", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.HourlyCommitment = "1e3" }), []string{"spec.computeSavingsPlan.hourlyCommitment:must be a decimal"}},
		{"hourly commitment missing", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.HourlyCommitment = "" }), []string{"spec.computeSavingsPlan.hourlyCommitment:Required value"}},
		{"hourly commitment with a space", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.HourlyCommitment = "12.5 " }), []string{"spec.computeSavingsPlan.hourlyCommitment:must be a decimal"}},
		{"hourly commitment with non-ASCII digits", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.HourlyCommitment = "١٢" }), []string{"spec.computeSavingsPlan.hourlyCommitment:must be a decimal"}},
		{"effective price a word", ri(func(r *v1alpha1.ReservedInstances) { r.EffectiveHourlyPrice = "free" }), []string{`spec.reservedInstances.effectiveHourlyPrice:"free"`}},
		{"effective price left out", ri(func(r *v1alpha1.ReservedInstances) { r.EffectiveHourlyPrice = "" }), nil},

		// Percentages: decimals from 0 to 100.
		{"percentages 0 and 100", csp(func(p *v1alpha1.ComputeSavingsPlan) {
			p.DefaultDiscount, p.Discounts[0].Percent, p.Discounts[1].Percent = "0", "100", "100.000"
		}), nil},
		{"percentage with leading zeros", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Discount = "0099.99" }), nil},
		{"default discount over 100", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.DefaultDiscount = "100.5" }), []string{`spec.computeSavingsPlan.defaultDiscount:"100.5": must be a percentage from 0 to 100`}},
		{"family rate just over 100", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.Discounts[1].Percent = "100.0000000000000001" }), []string{"spec.computeSavingsPlan.discounts[1].percent:must be a percentage"}},
		{"EC2 plan discount of 101", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Discount = "101" }), []string{"spec.ec2InstanceSavingsPlan.discount:must be a percentage"}},
		{"EC2 plan discount of 1000", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Discount = "1000" }), []string{"spec.ec2InstanceSavingsPlan.discount:must be a percentage"}},
		{"EC2 plan discount of 200", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Discount = "200" }), []string{"spec.ec2InstanceSavingsPlan.discount:must be a percentage"}},
		{"percentage with a percent sign", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.DefaultDiscount = "27.5%" }), []string{"spec.computeSavingsPlan.defaultDiscount:must be a decimal"}},
		{"percentage negative", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Discount = "-1" }), []string{"spec.ec2InstanceSavingsPlan.discount:must be a decimal"}},
		{"default discount missing", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.DefaultDiscount = "" }), []string{"spec.computeSavingsPlan.defaultDiscount:Required value"}},
		{"EC2 plan discount missing", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Discount = "" }), []string{"spec.ec2InstanceSavingsPlan.discount:Required value"}},
		{"family rate missing", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.Discounts[0].Percent = "" }), []string{"spec.computeSavingsPlan.discounts[0].percent:Required value"}},

		// Names and lists.
		{"family rate without a family", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.Discounts[1].Family = "" }), []string{"spec.computeSavingsPlan.discounts[1].family:Required value"}},
		{"family rate region too long", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.Discounts[0].Region = long }), []string{"spec.computeSavingsPlan.discounts[0].region:Too long"}},
		{"no family rates", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.Discounts = nil }), nil},
		{"1000 family rates", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.Discounts = discounts[:1000] }), nil},
		{"1001 family rates", csp(func(p *v1alpha1.ComputeSavingsPlan) { p.Discounts = discounts }), []string{"spec.computeSavingsPlan.discounts:Too many"}},
		{"EC2 plan without a family", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Family = "" }), []string{"spec.ec2InstanceSavingsPlan.family:Required value"}},
		{"EC2 plan family too long", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Family = long }), []string{"spec.ec2InstanceSavingsPlan.family:Too long"}},
		{"EC2 plan without a region", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Region = "" }), nil},
		{"EC2 plan region too long", ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.Region = long }), []string{"spec.ec2InstanceSavingsPlan.region:Too long"}},
		{"reservation without an instance type", ri(func(r *v1alpha1.ReservedInstances) { r.InstanceType = "" }), []string{"spec.reservedInstances.instanceType:Required value"}},
		{"reservation instance type too long", ri(func(r *v1alpha1.ReservedInstances) { r.InstanceType = long }), []string{"spec.reservedInstances.instanceType:Too long"}},
		{"reservation zone too long", ri(func(r *v1alpha1.ReservedInstances) { r.Zone = long }), []string{"spec.reservedInstances.zone:Too long"}},
		{"reservation region too long", ri(func(r *v1alpha1.ReservedInstances) { r.Region = long }), []string{"spec.reservedInstances.region:Too long"}},
		{"names of 63 characters, counted as characters", ri(func(r *v1alpha1.ReservedInstances) { r.Zone = strings.Repeat("é", 63) }), nil},

		// Count.
		{"count 1", ri(func(r *v1alpha1.ReservedInstances) { r.Count = 1 }), nil},
		{"count 100000", ri(func(r *v1alpha1.ReservedInstances) { r.Count = 100000 }), nil},
		{"count 0", ri(func(r *v1alpha1.ReservedInstances) { r.Count = 0 }), []string{"spec.reservedInstances.count:must be from 1 to 100000"}},
		{"count negative", ri(func(r *v1alpha1.ReservedInstances) { r.Count = -4 }), []string{"spec.reservedInstances.count:-4"}},
		{"count 100001", ri(func(r *v1alpha1.ReservedInstances) { r.Count = 100001 }), []string{"spec.reservedInstances.count:100001"}},

		// Offering class.
		{"offering class unset", ri(func(r *v1alpha1.ReservedInstances) { r.OfferingClass = "" }), nil},
		{"offering class Convertible", ri(func(r *v1alpha1.ReservedInstances) { r.OfferingClass = v1alpha1.OfferingClassConvertible }), nil},
		{"offering class Scheduled", ri(func(r *v1alpha1.ReservedInstances) { r.OfferingClass = "Scheduled" }), []string{`spec.reservedInstances.offeringClass:Unsupported value: "Scheduled"`}},
		{"offering class lower-case", ri(func(r *v1alpha1.ReservedInstances) { r.OfferingClass = "standard" }), []string{`spec.reservedInstances.offeringClass:"Standard", "Convertible"`}},

		// Every error at once, each naming its field.
		{"several errors", withHours(ec2(func(p *v1alpha1.EC2InstanceSavingsPlan) { p.HourlyCommitment, p.Family, p.Discount = "x", "", "150" }), at(0), at(0)),
			[]string{"spec.ec2InstanceSavingsPlan.hourlyCommitment:must be a decimal", "spec.ec2InstanceSavingsPlan.family:Required value",
				"spec.ec2InstanceSavingsPlan.discount:must be a percentage", "spec.end:end must be after start"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := v1alpha1.Validate(&v1alpha1.Commitment{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: c.spec})
			if len(c.want) == 0 {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			var agg utilerrors.Aggregate
			if !errors.As(err, &agg) {
				t.Fatalf("Validate = %v (%T), want an aggregate of field errors", err, err)
			}
			if len(agg.Errors()) != len(c.want) {
				t.Errorf("Validate = %d errors, want %d: %v", len(agg.Errors()), len(c.want), err)
			}
			for i, e := range agg.Errors() {
				fe, ok := e.(*field.Error)
				if !ok {
					t.Errorf("error %d is a %T, not a field error: %v", i, e, e)
					continue
				}
				if i >= len(c.want) {
					continue
				}
				path, msg, _ := strings.Cut(c.want[i], ":")
				if fe.Field != path || !strings.Contains(fe.Error(), msg) {
					t.Errorf("error %d = %q (field %s), want field %s and %q", i, fe.Error(), fe.Field, path, msg)
				}
			}
		})
	}
}

// --- scheme and deep copy ---

func TestAddToScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for obj, kind := range map[runtime.Object]string{&v1alpha1.Commitment{}: v1alpha1.CommitmentKind, &v1alpha1.CommitmentList{}: v1alpha1.CommitmentListKind} {
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0] != v1alpha1.SchemeGroupVersion.WithKind(kind) {
			t.Errorf("%T: kinds %v, %v; want tenon.sh/v1alpha1 %s", obj, gvks, err, kind)
		}
	}
}

func TestDeepCopyIsDeep(t *testing.T) {
	orig := typed(t, mustApply(t, apitest.ComputeSavingsPlanCommitment))
	cp := orig.DeepCopy()
	cp.Spec.ComputeSavingsPlan.Discounts[0].Percent = "99"
	cp.Spec.Start.Time = cp.Spec.Start.Add(time.Hour)
	if orig.Spec.ComputeSavingsPlan.Discounts[0].Percent != "31" || !orig.Spec.Start.Equal(&metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}) {
		t.Errorf("changing the copy changed the original: %+v", orig.Spec)
	}
}

func mustApply(t *testing.T, manifest string) map[string]interface{} {
	t.Helper()
	obj, err := apitest.Apply(apitest.Case{Object: manifest})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// typed decodes an object as stored into a Commitment, strictly.
func typed(t *testing.T, obj map[string]interface{}) *v1alpha1.Commitment {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	c := &v1alpha1.Commitment{}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		t.Fatal(err)
	}
	return c
}
