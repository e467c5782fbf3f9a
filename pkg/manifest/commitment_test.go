package manifest_test

import (
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/manifest"
)

// Commitments of every kind are decoded into Set.Commitments, typed, defaulted by their CRD,
// in the order read, and not kept aside in Set.Other.
func TestCommitmentsAreDecoded(t *testing.T) {
	docs := []string{
		apitest.ComputeSavingsPlanCommitment,
		apitest.EC2InstanceSavingsPlanCommitment,
		apitest.ZonalReservedInstancesCommitment,
		strings.Replace(apitest.RegionalReservedInstancesCommitment, "    offeringClass: Convertible\n", "", 1),
	}
	set, err := manifest.Parse("commitments.yaml", []byte(strings.Join(docs, "---\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Commitments) != 4 || len(set.Other) != 0 || len(set.Objects) != 4 {
		t.Fatalf("%d commitments, %d other objects, %d objects; want 4, 0, 4", len(set.Commitments), len(set.Other), len(set.Objects))
	}
	for i, name := range []string{"compute-plan", "m7i-plan", "m5-zonal", "c6i-regional"} {
		c := set.Commitments[i]
		if c.Name != name || c.UID == "" || c.Namespace != "" || set.Objects[i].Object != c {
			t.Errorf("commitment %d: name %q, uid %q, namespace %q, same as Objects[%d]: %t", i, c.Name, c.UID, c.Namespace, i, set.Objects[i].Object == c)
		}
		if err := tenonv1alpha1.Validate(c); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	csp := set.Commitments[0].Spec
	if p := csp.ComputeSavingsPlan; p == nil || p.HourlyCommitment != "12.50" || len(p.Discounts) != 2 || p.Discounts[1].Region != "eu-west-1" || csp.Start == nil || csp.End.Year() != 2029 {
		t.Errorf("Compute Savings Plan decoded as %+v", csp)
	}
	if r := set.Commitments[3].Spec.ReservedInstances; r == nil || r.OfferingClass != tenonv1alpha1.OfferingClassStandard || r.Count != 10 {
		t.Errorf("regional Reserved Instances decoded as %+v; want offeringClass defaulted to Standard", r)
	}
	if kinds := set.Kinds(); len(kinds) != 1 || kinds[0].GroupKind != tenonv1alpha1.CommitmentGroupKind || kinds[0].Count != 4 {
		t.Errorf("Kinds = %+v", kinds)
	}
}

// A bad Commitment is an error naming the file, the line, the object and the field, whether
// its CRD refuses it or tenon's validation does.
func TestBadCommitmentsAreErrors(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      []string
	}{
		{"two kinds (CEL)", apitest.ComputeSavingsPlanCommitment + "  reservedInstances: {instanceType: m5.large, count: 1}\n",
			[]string{"c.yaml:6: document 1 (Commitment compute-plan): spec: Invalid value: exactly one of"}},
		{"end before start (CEL)", strings.Replace(apitest.ComputeSavingsPlanCommitment, "2029-01-01", "2025-01-01", 1),
			[]string{"c.yaml:6: document 1 (Commitment compute-plan): spec: Invalid value: end must be after start"}},
		{"bad decimal (pattern)", strings.Replace(apitest.EC2InstanceSavingsPlanCommitment, `"4.00"`, `"4,00"`, 1),
			[]string{"c.yaml:8: document 1 (Commitment m7i-plan): spec.ec2InstanceSavingsPlan.hourlyCommitment: Invalid value: \"4,00\""}},
		{"count 0 (minimum)", strings.Replace(apitest.ZonalReservedInstancesCommitment, "count: 4", "count: 0", 1),
			[]string{"c.yaml:10: document 1 (Commitment m5-zonal): spec.reservedInstances.count: Invalid value: 0"}},
		{"unknown offering class (enum)", strings.Replace(apitest.RegionalReservedInstancesCommitment, "Convertible", "Flexible", 1),
			[]string{`c.yaml:11: document 1 (Commitment c6i-regional): spec.reservedInstances.offeringClass: Unsupported value: "Flexible"`}},
		{"unknown field (strict)", strings.Replace(apitest.RegionalReservedInstancesCommitment, "count: 10", "count: 10\n    term: 3y", 1),
			[]string{`(Commitment c6i-regional): unknown field "spec.reservedInstances.term"`}},
		{"two percentages over 100 (Validate)", strings.NewReplacer(`"27.5"`, `"127.5"`, `"31"`, `"310"`).Replace(apitest.ComputeSavingsPlanCommitment),
			[]string{`c.yaml:11: document 1 (Commitment compute-plan): spec.computeSavingsPlan.defaultDiscount: Invalid value: "127.5": must be a percentage from 0 to 100`,
				`c.yaml:13: document 1 (Commitment compute-plan): spec.computeSavingsPlan.discounts[0].percent: Invalid value: "310": must be a percentage from 0 to 100`}},
		{"a version tenon.sh does not serve", strings.Replace(apitest.EC2InstanceSavingsPlanCommitment, "v1alpha1", "v1", 1),
			[]string{`c.yaml:2: document 1 (Commitment m7i-plan): no matches for kind "Commitment" in version "tenon.sh/v1"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			set, err := manifest.Parse("c.yaml", []byte(c.doc))
			if err == nil {
				t.Fatalf("loaded %d commitments; want an error", len(set.Commitments))
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain\n  %s\ngot\n  %v", want, err)
				}
			}
		})
	}
}
