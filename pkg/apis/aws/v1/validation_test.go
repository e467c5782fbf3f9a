package v1_test

import (
	"encoding/json"
	"testing"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
)

func runCases(t *testing.T, cases []apitest.Case) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Errorf("duplicate case name %q", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			if c.Old != "" {
				if err := apitest.Check(apitest.Case{Object: c.Old}); err != nil {
					t.Fatalf("old object: %v", err)
				}
			}
			if err := apitest.Check(c); err != nil {
				t.Errorf("%v\n%s", err, c.Object)
			}
		})
	}
}

func TestInvalidEC2NodeClasses(t *testing.T) {
	cases := apitest.InvalidEC2NodeClasses()
	if len(cases) < 40 {
		t.Errorf("only %d invalid EC2NodeClasses; want at least 40", len(cases))
	}
	runCases(t, cases)
}

func TestValidEC2NodeClasses(t *testing.T) { runCases(t, apitest.ValidEC2NodeClasses()) }

// decodeStored applies the CRD's defaults to a manifest and decodes the stored object.
func decodeStored(t *testing.T, manifest string) *awsv1.EC2NodeClass {
	t.Helper()
	obj, err := apitest.Apply(apitest.Case{Object: manifest})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	nc := &awsv1.EC2NodeClass{}
	if err := json.Unmarshal(b, nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

// The schema's defaults are Karpenter's: IMDSv2 required, hop limit 1, the endpoint on and its
// IPv6 address off; a capacity reservation is of the default type and active.
func TestDefaultsApplied(t *testing.T) {
	nc := decodeStored(t, apitest.BaseEC2NodeClass)
	m := nc.Spec.MetadataOptions
	if m == nil || *m.HTTPEndpoint != "enabled" || *m.HTTPProtocolIPv6 != "disabled" || *m.HTTPPutResponseHopLimit != 1 || *m.HTTPTokens != "required" {
		t.Errorf("metadataOptions defaulted to %+v", m)
	}
	if got := nc.Spec.GetMetadataOptions(); *got.HTTPTokens != *m.HTTPTokens || *got.HTTPPutResponseHopLimit != *m.HTTPPutResponseHopLimit {
		t.Errorf("GetMetadataOptions of the defaulted spec disagrees with the schema: %+v", got)
	}
	// A partial block gets the rest of its fields.
	partial := decodeStored(t, apitest.BaseEC2NodeClass+"  metadataOptions: {httpTokens: optional}\n")
	if m := partial.Spec.MetadataOptions; *m.HTTPTokens != "optional" || *m.HTTPEndpoint != "enabled" || *m.HTTPPutResponseHopLimit != 1 {
		t.Errorf("partial metadataOptions defaulted to %+v", m)
	}
	resolved := decodeStored(t, apitest.ResolvedEC2NodeClass)
	cr := resolved.Status.CapacityReservations[0]
	if cr.ReservationType != awsv1.CapacityReservationTypeCapacityBlock || cr.State != awsv1.CapacityReservationStateActive {
		t.Errorf("capacity reservation defaulted to type %q state %q", cr.ReservationType, cr.State)
	}
	// Go-built specs get the same values from the accessor.
	var empty awsv1.EC2NodeClassSpec
	if g := empty.GetMetadataOptions(); *g.HTTPEndpoint != "enabled" || *g.HTTPProtocolIPv6 != "disabled" || *g.HTTPPutResponseHopLimit != 1 || *g.HTTPTokens != "required" {
		t.Errorf("GetMetadataOptions of an empty spec = %+v", g)
	}
}

func TestAliasAndAMIFamily(t *testing.T) {
	for _, c := range []struct {
		alias, family, want string
	}{
		{"al2023@latest", "", awsv1.AMIFamilyAL2023},
		{"al2@v20240101", "", awsv1.AMIFamilyAL2},
		{"bottlerocket@v1.20.0", "", awsv1.AMIFamilyBottlerocket},
		{"windows2022@latest", "", awsv1.AMIFamilyWindows2022},
		{"al2023@latest", awsv1.AMIFamilyCustom, awsv1.AMIFamilyCustom},
		{"", awsv1.AMIFamilyAL2, awsv1.AMIFamilyAL2},
	} {
		nc := &awsv1.EC2NodeClass{}
		if c.alias != "" {
			nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: c.alias}}
		} else {
			nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{ID: "ami-1"}}
		}
		if c.family != "" {
			nc.Spec.AMIFamily = &c.family
		}
		if got := nc.AMIFamily(); got != c.want {
			t.Errorf("alias %q family %q: AMIFamily = %q, want %q", c.alias, c.family, got, c.want)
		}
		if a, ok := nc.Alias(); c.alias != "" && (!ok || a.String() != c.alias) {
			t.Errorf("Alias() of %q = %v, %v", c.alias, a, ok)
		}
	}
	if _, ok := awsv1.ParseAlias("ubuntu@latest"); ok {
		t.Error("ParseAlias accepted an unknown family")
	}
	if _, ok := awsv1.ParseAlias("al2023@"); ok {
		t.Error("ParseAlias accepted an empty version")
	}
}
