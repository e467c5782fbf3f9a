package status_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/nodepool/status"
)

func pool(mut func(*apisv1.NodePool)) *apisv1.NodePool {
	np := &apisv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default", ResourceVersion: "12", UID: "u", Generation: 3},
		Spec: apisv1.NodePoolSpec{Template: apisv1.NodeClaimTemplate{Spec: apisv1.NodeClaimTemplateSpec{
			Requirements: []apisv1.NodeSelectorRequirementWithMinValues{
				{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"spot", "on-demand"}},
			},
			NodeClassRef: &apisv1.NodeClassReference{Group: "sim.tenon.sh", Kind: "SimNodeClass", Name: "default"},
		}}},
	}
	if mut != nil {
		mut(np)
	}
	return np
}

func TestValidate(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		np   *apisv1.NodePool
		want string // substring of the error; "" for none
	}{
		{"valid", pool(nil), ""},
		{"contradictory requirements", pool(func(np *apisv1.NodePool) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				apisv1.NodeSelectorRequirementWithMinValues{Key: apisv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"spot", "on-demand"}})
		}), "karpenter.sh/capacity-type allow no value"},
		{"empty range", pool(func(np *apisv1.NodePool) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				apisv1.NodeSelectorRequirementWithMinValues{Key: apisv1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{"8"}},
				apisv1.NodeSelectorRequirementWithMinValues{Key: apisv1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpLt, Values: []string{"4"}})
		}), "instance-cpu allow no value"},
		{"bad budget schedule", pool(func(np *apisv1.NodePool) {
			schedule := "every day"
			np.Spec.Disruption.Budgets = []apisv1.Budget{{Nodes: "1", Schedule: &schedule, Duration: &metav1.Duration{Duration: time.Hour}}}
		}), "budgets[0]"},
		{"MIG layout", pool(func(np *apisv1.NodePool) {
			np.Spec.Template.Labels = map[string]string{"nvidia.com/mig.config": "all-1g.10gb"}
		}), ""},
		{"MIG layout not modelled", pool(func(np *apisv1.NodePool) {
			np.Spec.Template.Labels = map[string]string{"nvidia.com/mig.config": "all-balanced"}
		}), `nvidia.com/mig.config="all-balanced"`},
		{"schema: restricted label", pool(func(np *apisv1.NodePool) {
			np.Spec.Template.Labels = map[string]string{"kubernetes.io/hostname": "x"}
		}), "hostname"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := status.Validate(tc.np, now)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
