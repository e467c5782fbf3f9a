package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// Every invalid NodePool and NodeClaim of the API's table is refused by a real kube-apiserver
// with its message, and every valid one is accepted: the CRDs' OpenAPI and CEL rules hold where
// it matters.
func TestAPIServerValidatesNodePoolsAndNodeClaims(t *testing.T) {
	e := start(t, operator.Options{})
	e.stop() // only the API server is needed
	cases := append(apitest.InvalidNodePools(), apitest.InvalidNodeClaims()...)
	if len(cases) < 40 {
		t.Fatalf("only %d invalid cases", len(cases))
	}
	cases = append(cases, apitest.ValidNodePools()...)
	cases = append(cases, apitest.ValidNodeClaims()...)
	replay(t, e, cases)
}

// Every invalid EC2NodeClass of the table is refused by a real kube-apiserver with its message,
// every valid one is accepted, and the defaults the server applies are Karpenter's.
func TestAPIServerValidatesEC2NodeClasses(t *testing.T) {
	e := start(t, operator.Options{})
	e.stop()
	invalid := apitest.InvalidEC2NodeClasses()
	if len(invalid) < 40 {
		t.Fatalf("only %d invalid cases", len(invalid))
	}
	replay(t, e, append(invalid, apitest.ValidEC2NodeClasses()...))

	nc := decode(t, apitest.BaseEC2NodeClass)
	nc.SetName("defaults")
	if err := e.kube.Create(e.ctx, nc); err != nil {
		t.Fatal(err)
	}
	got := &awsv1.EC2NodeClass{}
	if err := e.kube.Get(e.ctx, client.ObjectKey{Name: "defaults"}, got); err != nil {
		t.Fatal(err)
	}
	m := got.Spec.MetadataOptions
	if m == nil || *m.HTTPEndpoint != "enabled" || *m.HTTPProtocolIPv6 != "disabled" || *m.HTTPPutResponseHopLimit != 1 || *m.HTTPTokens != "required" {
		t.Errorf("the server defaulted metadataOptions to %+v", m)
	}
}

// Every invalid Commitment of the table is refused by a real kube-apiserver with its message
// (two kinds, end before start, a malformed decimal, among others), every valid one is
// accepted, and the server defaults a reservation's offering class to Standard.
func TestAPIServerValidatesCommitments(t *testing.T) {
	e := start(t, operator.Options{})
	e.stop()
	invalid := apitest.InvalidCommitments()
	for _, name := range []string{"two kinds", "end before start", "hourlyCommitment with a comma"} {
		if !slices.ContainsFunc(invalid, func(c apitest.Case) bool { return c.Name == name }) {
			t.Fatalf("the table has no case %q", name)
		}
	}
	replay(t, e, append(invalid, apitest.ValidCommitments()...))

	c := decode(t, strings.Replace(apitest.RegionalReservedInstancesCommitment, "    offeringClass: Convertible\n", "", 1))
	c.SetName("defaults")
	if err := e.kube.Create(e.ctx, c, client.FieldValidation("Strict")); err != nil {
		t.Fatal(err)
	}
	got := &tenonv1alpha1.Commitment{}
	if err := e.kube.Get(e.ctx, client.ObjectKey{Name: "defaults"}, got); err != nil {
		t.Fatal(err)
	}
	if r := got.Spec.ReservedInstances; r == nil || r.OfferingClass != tenonv1alpha1.OfferingClassStandard {
		t.Errorf("the server stored reservedInstances %+v; want offeringClass Standard", r)
	}
	if err := tenonv1alpha1.Validate(got); err != nil {
		t.Errorf("the stored Commitment fails Validate: %v", err)
	}
}

// replay creates (or, with Old, creates Old then updates to Object) each case on the server and
// checks the outcome against the case.
func replay(t *testing.T, e *env, cases []apitest.Case) {
	t.Helper()
	for i, c := range cases {
		t.Run(fmt.Sprintf("%03d-%s", i, c.Name), func(t *testing.T) {
			obj := decode(t, c.Object)
			// Names must differ per case: one API server serves all of them.
			name := fmt.Sprintf("case-%03d", i)
			obj.SetName(name)
			var err error
			if c.Old != "" {
				old := decode(t, c.Old)
				old.SetName(name)
				if err := e.kube.Create(e.ctx, old); err != nil {
					t.Fatalf("creating the old object: %v", err)
				}
				obj.SetResourceVersion(old.GetResourceVersion())
				err = e.kube.Update(e.ctx, obj, client.FieldValidation("Strict"))
			} else {
				// Strict, as kubectl apply asks by default: unknown fields are errors.
				err = e.kube.Create(e.ctx, obj, client.FieldValidation("Strict"))
			}
			want := c.Want
			if w, ok := serverWording[want]; ok {
				want = w
			}
			switch {
			case want == "" && err != nil:
				t.Errorf("valid object refused: %v", err)
			case want != "" && err == nil:
				t.Errorf("invalid object accepted; want an error containing %q", want)
			case want != "" && !strings.Contains(err.Error(), want):
				t.Errorf("error %q does not contain %q", err, want)
			}
		})
	}
}

// serverWording maps the messages of the offline validator to the API server's own where the
// server refuses earlier, before the schema: a version it does not serve fails discovery.
var serverWording = map[string]string{
	"must be karpenter.sh/v1":      "no matches for karpenter.sh/v1beta1",
	"must be karpenter.k8s.aws/v1": "no matches for karpenter.k8s.aws/v1beta1",
	"must be tenon.sh/v1alpha1":    "no matches for tenon.sh/v1beta1",
}

func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	m, err := apitest.Decode(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// A NodePool whose disruption block leaves consolidateAfter out is accepted by the API server
// and stored with Karpenter's default, 0s, beside the fields it did give.
func TestAPIServerDefaultsConsolidateAfterLeftOutOfDisruption(t *testing.T) {
	e := start(t, operator.Options{})
	e.stop() // only the API server is needed
	obj := decode(t, apitest.BaseNodePool)
	obj.SetName("no-consolidate-after")
	if err := unstructured.SetNestedMap(obj.Object, map[string]any{"consolidationPolicy": "WhenEmpty"}, "spec", "disruption"); err != nil {
		t.Fatal(err)
	}
	if err := e.kube.Create(e.ctx, obj, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("NodePool without consolidateAfter refused: %v", err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	if err := e.kube.Get(e.ctx, client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	after, _, _ := unstructured.NestedString(got.Object, "spec", "disruption", "consolidateAfter")
	policy, _, _ := unstructured.NestedString(got.Object, "spec", "disruption", "consolidationPolicy")
	if after != "0s" || policy != "WhenEmpty" {
		t.Errorf("stored disruption = consolidateAfter %q, consolidationPolicy %q; want 0s and the given WhenEmpty", after, policy)
	}
}
