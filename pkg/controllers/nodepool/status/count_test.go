package status_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/nodepool/status"
)

func resources(cpu, gpu string) corev1.ResourceList {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	if gpu != "" {
		l["nvidia.com/gpu"] = resource.MustParse(gpu)
	}
	return l
}

func claim(id string, capacity corev1.ResourceList, initialized bool) *apisv1.NodeClaim {
	c := &apisv1.NodeClaim{Status: apisv1.NodeClaimStatus{ProviderID: id, Capacity: capacity}}
	if initialized {
		c.SetCondition(metav1.Condition{Type: apisv1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: "Initialized"}, time.Now())
	}
	return c
}

func node(id string, capacity corev1.ResourceList) *corev1.Node {
	return &corev1.Node{Spec: corev1.NodeSpec{ProviderID: id}, Status: corev1.NodeStatus{Capacity: capacity}}
}

func TestCount(t *testing.T) {
	claims := []*apisv1.NodeClaim{
		claim("", nil, false),                        // not launched: counted, no capacity
		claim("sim://a", resources("4", "1"), false), // launched, no Node yet
		claim("sim://b", resources("4", "1"), false), // Node up, GPU not registered: the claim's
		claim("sim://c", resources("8", ""), true),   // initialized: the Node's
		claim("sim://d", nil, false),                 // expects nothing: the Node's
	}
	nodes := []*corev1.Node{
		node("sim://b", resources("4", "")),
		node("sim://c", resources("7", "")),
		node("sim://d", resources("2", "")),
		node("sim://e", resources("16", "")), // no claim
	}
	n, total := status.Count(claims, nodes)
	if n != 6 {
		t.Errorf("nodes %d, want 6", n)
	}
	cpu, gpu := total[corev1.ResourceCPU], total["nvidia.com/gpu"]
	if cpu.Value() != 4+4+7+2+16 || gpu.Value() != 2 {
		t.Errorf("resources %v, want 33 cpu and 2 GPUs", total)
	}
	if n, total := status.Count(nil, nil); n != 0 || len(total) != 0 {
		t.Errorf("empty pool: %d %v", n, total)
	}
}
