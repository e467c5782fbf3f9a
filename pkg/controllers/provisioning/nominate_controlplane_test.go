package provisioning_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/internal/ctrltest"
	"github.com/tenon-sh/tenon/pkg/controllers/provisioning"
)

// A burst of pods of mixed sizes planned onto several NodeClaims of different types binds where
// the plan put each pod when the provisioner nominates them (status.nominatedNodeName, once the
// claim's node registers), and buys nothing beyond its first plan. The same burst without
// nomination is reported for comparison (kube-scheduler then binds by its own scores).
func TestPodsBindWhereTheyWerePlanned(t *testing.T) {
	for _, nominate := range []bool{true, false} {
		t.Run(fmt.Sprintf("nominate=%v", nominate), func(t *testing.T) {
			moved, extra := burst(t, nominate)
			t.Logf("nominate=%v: %d pods bound off their planned node, %d NodeClaims beyond the first plan", nominate, moved, extra)
			if nominate && (moved != 0 || extra != 0) {
				t.Errorf("with nomination, %d pods bound off their planned node and %d NodeClaims were bought beyond the first plan; want 0 and 0", moved, extra)
			}
		})
	}
}

func burst(t *testing.T, nominate bool) (moved, extra int) {
	e := ctrltest.Start(t)
	e.NodeClass(t, "burst", ctrltest.FastSpec())
	np := &apisv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "burst"}}
	np.Spec.Template.Spec.NodeClassRef = ctrltest.NodeClassRef("burst")
	np.Spec.Template.Spec.Requirements = []apisv1.NodeSelectorRequirementWithMinValues{
		ctrltest.Req(apisv1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5"),
		ctrltest.Req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand),
	}
	np.Spec.Disruption.ConsolidateAfter = apisv1.NillableDuration{} // Never: the burst is what is measured
	e.Create(t, np)
	e.Namespace(t, "burst")
	var first atomic.Int64
	first.Store(-1)
	startLoops(t, e, provisioning.Options{BatchIdle: time.Second, BatchMax: 3 * time.Second, NominatePods: nominate,
		OnBatch: func(res *provisioning.Result, _, _ time.Time) {
			if len(res.Claims) > 0 {
				first.CompareAndSwap(-1, int64(len(res.Claims)))
			}
		}}, nil)
	cpus := []string{"3500m", "250m", "1", "1500m", "500m", "7", "2", "750m"}
	n := 40
	for i := range n {
		e.Create(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "burst", Name: fmt.Sprintf("p-%02d", i)},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{apisv1.NodePoolLabelKey: "burst"},
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus[i%len(cpus)]), corev1.ResourceMemory: resource.MustParse("1Gi")}}}},
			},
		})
	}
	var pods corev1.PodList
	ctrltest.Eventually(t, "every pod Running", func() (bool, string) {
		if err := e.Client.List(context.Background(), &pods, client.InNamespace("burst")); err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n, fmt.Sprintf("%d of %d", running, n)
	})
	claims := &apisv1.NodeClaimList{}
	if err := e.Client.List(context.Background(), claims); err != nil {
		t.Fatal(err)
	}
	nodeOf := map[string]string{}
	for _, c := range claims.Items {
		nodeOf[c.Name] = c.Status.NodeName
	}
	for _, p := range pods.Items {
		var planned string
		var at time.Time
		for _, ev := range e.Events(t, p.Name, provisioning.EventNominated) {
			if ev.LastTimestamp.Time.After(at) || planned == "" {
				if _, c, ok := strings.Cut(ev.Message, "nodeclaim/"); ok {
					planned, at = c, ev.LastTimestamp.Time
				}
			}
		}
		if planned != "" && nodeOf[planned] != p.Spec.NodeName {
			moved++
		}
	}
	return moved, len(claims.Items) - int(first.Load())
}
