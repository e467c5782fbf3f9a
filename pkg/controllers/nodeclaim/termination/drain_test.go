package termination_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeclaim/termination"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func pod(name string, mut ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	for _, m := range mut {
		m(p)
	}
	return p
}

func critical(p *corev1.Pod) { p.Spec.PriorityClassName = "system-cluster-critical" }

func deleting(at time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: at} }
}

func doNotDisrupt(p *corev1.Pod) {
	p.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: "true"}
}

func grace(s int64) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &s }
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	slices.Sort(out)
	return out
}

func deletions(ds []termination.PodDeletion) map[string]int64 {
	out := map[string]int64{}
	for _, d := range ds {
		out[d.Pod.Name] = d.GracePeriodSeconds
	}
	return out
}

func TestPlanDrainOrder(t *testing.T) {
	ds := pod("ds", func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "d", Controller: ptr.To(true)}}
	})
	mirror := pod("mirror", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} })
	static := pod("static", func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n", Controller: ptr.To(true)}}
	})
	done := pod("done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	failed := pod("failed", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
	tolerant := pod("tolerant", func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: apisv1.DisruptedTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	})
	tolerantAll := pod("tolerant-all", func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	})
	ignored := []*corev1.Pod{ds, mirror, static, done, failed, tolerant, tolerantAll}

	for _, tc := range []struct {
		name          string
		pods          []*corev1.Pod
		evict, waitOn []string
	}{
		{"nothing to drain", ignored, nil, nil},
		{"non-critical first", append([]*corev1.Pod{pod("a"), pod("b"), pod("sys", critical)}, ignored...),
			[]string{"a", "b"}, []string{"a", "b", "sys"}},
		{"critical once the non-critical are gone", append([]*corev1.Pod{pod("sys", critical), pod("node", func(p *corev1.Pod) {
			p.Spec.Priority = ptr.To[int32](2_000_001_000)
		})}, ignored...), []string{"node", "sys"}, []string{"node", "sys"}},
		{"terminating non-critical pods hold the critical back", []*corev1.Pod{pod("a", deleting(epoch)), pod("sys", critical)},
			nil, []string{"a", "sys"}},
		{"do-not-disrupt is waited for but holds nothing back", []*corev1.Pod{pod("keep", doNotDisrupt), pod("sys", critical)},
			[]string{"sys"}, []string{"keep", "sys"}},
		{"pods stuck terminating are not waited for", []*corev1.Pod{pod("stuck", deleting(epoch.Add(-2*time.Minute))), pod("sys", critical)},
			[]string{"sys"}, []string{"sys"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := termination.PlanDrain(tc.pods, epoch, nil, time.Minute)
			if got := names(plan.Evict); !slices.Equal(got, tc.evict) && len(got)+len(tc.evict) > 0 {
				t.Errorf("evict %v, want %v", got, tc.evict)
			}
			if got := names(plan.Waiting); !slices.Equal(got, tc.waitOn) && len(got)+len(tc.waitOn) > 0 {
				t.Errorf("waiting %v, want %v", got, tc.waitOn)
			}
			if plan.Drained() != (len(tc.waitOn) == 0) || len(plan.Delete) > 0 || plan.Expired {
				t.Errorf("drained %v, delete %v, expired %v", plan.Drained(), plan.Delete, plan.Expired)
			}
		})
	}
}

// A do-not-disrupt duration protects a pod from eviction until that long after it started;
// then the drain evicts it like any other. A value that is no duration protects nothing.
func TestDrainHonoursDoNotDisruptDuration(t *testing.T) {
	annotated := func(v string, started time.Time) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Annotations = map[string]string{apisv1.DoNotDisruptAnnotationKey: v}
			p.Status.StartTime = &metav1.Time{Time: started}
		}
	}
	pods := []*corev1.Pod{
		pod("fresh", annotated("1h", epoch.Add(-30*time.Minute))),
		pod("old", annotated("1h", epoch.Add(-2*time.Hour))),
		pod("garbage", annotated("soon", epoch)),
	}
	plan := termination.PlanDrain(pods, epoch, nil, time.Minute)
	if got := names(plan.Evict); !slices.Equal(got, []string{"garbage", "old"}) {
		t.Errorf("evict %v, want [garbage old]: fresh is protected for 30 more minutes", got)
	}
	if got := names(plan.Waiting); !slices.Equal(got, []string{"fresh", "garbage", "old"}) {
		t.Errorf("waiting %v", got)
	}
	plan = termination.PlanDrain(pods[:1], epoch.Add(30*time.Minute), nil, time.Minute)
	if got := names(plan.Evict); !slices.Equal(got, []string{"fresh"}) {
		t.Errorf("evict %v once the hour ran out, want [fresh]", got)
	}
}

func TestPlanDrainDeadline(t *testing.T) {
	deadline := epoch.Add(10 * time.Second)
	pods := []*corev1.Pod{
		pod("long", grace(30)),                                        // must go now, with the 10s left
		pod("short", grace(5)),                                        // has time: evicted normally
		pod("protected", doNotDisrupt, grace(10)),                     // its 10s start now
		pod("leaving", grace(30), deleting(epoch.Add(5*time.Second))), // gone before the deadline
		pod("late", grace(30), deleting(epoch.Add(time.Minute))),      // would outlive it
	}
	plan := termination.PlanDrain(pods, epoch, &deadline, time.Minute)
	if got, want := deletions(plan.Delete), map[string]int64{"long": 10, "protected": 10, "late": 10}; !mapsEqual(got, want) {
		t.Errorf("delete %v, want %v", got, want)
	}
	if got := names(plan.Evict); !slices.Equal(got, []string{"short"}) {
		t.Errorf("evict %v", got)
	}
	if plan.Drained() || plan.Expired {
		t.Error("drained before the deadline with pods left")
	}

	plan = termination.PlanDrain(pods, deadline.Add(time.Millisecond), &deadline, time.Minute)
	if !plan.Expired || !plan.Drained() {
		t.Errorf("after the deadline: expired %v drained %v", plan.Expired, plan.Drained())
	}
	if got := deletions(plan.Delete); got["short"] != 0 || got["long"] != 0 || len(got) != 4 {
		t.Errorf("after the deadline the pods are deleted at once: %v", got)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestDrainMessage(t *testing.T) {
	var pods []*corev1.Pod
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		pods = append(pods, pod(n))
	}
	plan := termination.PlanDrain(pods, epoch, nil, time.Minute)
	if got, want := plan.Message(), "waiting for 7 pods to leave: ns/a, ns/b, ns/c, ns/d, ns/e and 2 more"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
