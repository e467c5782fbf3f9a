package v1_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// stored runs manifest through the schema (validation and defaults) and decodes the result.
func stored[T any](t *testing.T, manifest string) *T {
	t.Helper()
	obj, err := apitest.Apply(apitest.Case{Object: manifest})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNodePoolDefaults(t *testing.T) {
	np := stored[v1.NodePool](t, apitest.BaseNodePool)
	if d := np.Spec.Template.Spec.ExpireAfter; d.IsNever() || *d.Duration != 720*time.Hour {
		t.Errorf("expireAfter = %v, want 720h", d)
	}
	if d := np.Spec.Disruption.ConsolidateAfter; d.IsNever() || *d.Duration != 0 {
		t.Errorf("consolidateAfter = %v, want 0s", d)
	}
	if p := np.Spec.Disruption.ConsolidationPolicy; p != v1.ConsolidationPolicyWhenEmptyOrUnderutilized {
		t.Errorf("consolidationPolicy = %q, want WhenEmptyOrUnderutilized", p)
	}
	if b := np.Spec.Disruption.Budgets; !reflect.DeepEqual(b, []v1.Budget{{Nodes: "10%"}}) {
		t.Errorf("budgets = %+v, want [{nodes: 10%%}]", b)
	}
	if np.Spec.Weight != nil || np.Spec.Replicas != nil || np.Spec.Template.Spec.TerminationGracePeriod != nil {
		t.Errorf("fields without defaults were set: %+v", np.Spec)
	}
}

func TestNodePoolDefaultsInsideAGivenDisruption(t *testing.T) {
	np := stored[v1.NodePool](t, patchYAML(apitest.BaseNodePool, `{spec: {disruption: {consolidateAfter: 5m, budgets: [{reasons: [Drifted]}, {nodes: '3'}]}}}`))
	d := np.Spec.Disruption
	if d.ConsolidationPolicy != v1.ConsolidationPolicyWhenEmptyOrUnderutilized {
		t.Errorf("consolidationPolicy = %q", d.ConsolidationPolicy)
	}
	if *d.ConsolidateAfter.Duration != 5*time.Minute {
		t.Errorf("consolidateAfter = %v, want the given 5m", d.ConsolidateAfter)
	}
	if len(d.Budgets) != 2 || d.Budgets[0].Nodes != "10%" || d.Budgets[1].Nodes != "3" {
		t.Errorf("budgets = %+v, want nodes defaulted to 10%% only where missing", d.Budgets)
	}
}

// Karpenter defaults consolidateAfter to 0s whenever it is left out, also inside a disruption
// block that sets something else, so manifests written for it apply unchanged.
func TestConsolidateAfterDefaultsToZeroInsideAGivenDisruption(t *testing.T) {
	np := stored[v1.NodePool](t, patchYAML(apitest.BaseNodePool, `{spec: {disruption: {consolidationPolicy: WhenEmpty}}}`))
	d := np.Spec.Disruption
	if d.ConsolidateAfter.IsNever() || *d.ConsolidateAfter.Duration != 0 {
		t.Errorf("consolidateAfter = %v, want 0s", d.ConsolidateAfter)
	}
	if d.ConsolidationPolicy != v1.ConsolidationPolicyWhenEmpty {
		t.Errorf("consolidationPolicy = %q, want the given WhenEmpty", d.ConsolidationPolicy)
	}
}

func TestNodePoolStatusDefaults(t *testing.T) {
	np := stored[v1.NodePool](t, patchYAML(apitest.BaseNodePool, `{status: {resources: {cpu: '4'}}}`))
	if np.Status.Nodes == nil || *np.Status.Nodes != 0 {
		t.Errorf("status.nodes = %v, want 0", np.Status.Nodes)
	}
}

func TestNodeClaimDefaults(t *testing.T) {
	nc := stored[v1.NodeClaim](t, apitest.BaseNodeClaim)
	if d := nc.Spec.ExpireAfter; d.IsNever() || *d.Duration != 720*time.Hour {
		t.Errorf("expireAfter = %v, want 720h", d)
	}
	if nc.Spec.TerminationGracePeriod != nil || nc.Spec.Resources.Requests != nil {
		t.Errorf("fields without defaults were set: %+v", nc.Spec)
	}
}
