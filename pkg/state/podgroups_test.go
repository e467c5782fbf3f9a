package state

import (
	"slices"
	"testing"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestPodGroupsAsGangsAndWholeGroups: a PodGroup is a gang when its policy is one, and disrupted
// whole when its disruption mode is All, independently; an update that changes either is
// followed, and a deletion forgets both.
func TestPodGroupsAsGangsAndWholeGroups(t *testing.T) {
	c := NewCluster(clocktesting.NewFakeClock(time.Unix(1000, 0)))
	pg := func(name string, gang, all bool) *schedulingv1beta1.PodGroup {
		p := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name}}
		if gang {
			p.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: 4}
		} else {
			p.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
		}
		if all {
			p.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
		} else {
			p.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
		}
		return p
	}
	c.UpdatePodGroup(pg("train", true, true))
	c.UpdatePodGroup(pg("serve", false, true))
	c.UpdatePodGroup(pg("batch", true, false))
	if got, want := c.WholeGroups(), []string{"ml/serve", "ml/train"}; !slices.Equal(got, want) {
		t.Errorf("WholeGroups = %v, want %v", got, want)
	}
	if got := c.Gangs(); len(got) != 2 || got[0].Name != "batch" || got[1].Name != "train" {
		t.Errorf("Gangs = %+v, want batch and train", got)
	}
	c.UpdatePodGroup(pg("serve", false, false))
	c.DeletePodGroup("ml", "train")
	if got := c.WholeGroups(); len(got) != 0 {
		t.Errorf("after the update and the deletion WholeGroups = %v, want none", got)
	}
}
