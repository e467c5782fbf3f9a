package v1_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

func TestDoNotDisruptDurationProtectsFromPodStartUntilItRunsOut(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(v string, started bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1.DoNotDisruptAnnotationKey: v},
			CreationTimestamp: metav1.NewTime(start.Add(-time.Hour))}}
		if started {
			p.Status.StartTime = &metav1.Time{Time: start}
		}
		return p
	}
	for _, c := range []struct {
		name    string
		pod     *corev1.Pod
		now     time.Time
		active  bool
		until   time.Time
		invalid bool
	}{
		{name: "no annotation", pod: &corev1.Pod{}, now: start},
		{name: "true", pod: pod("true", true), now: start.Add(1000 * time.Hour), active: true},
		{name: "duration running", pod: pod("30m", true), now: start.Add(29 * time.Minute), active: true, until: start.Add(30 * time.Minute)},
		{name: "duration run out", pod: pod("30m", true), now: start.Add(30 * time.Minute)},
		{name: "duration counts from start, not creation", pod: pod("90m", true), now: start.Add(45 * time.Minute), active: true, until: start.Add(90 * time.Minute)},
		{name: "duration on a pod not started", pod: pod("1m", false), now: start.Add(1000 * time.Hour), active: true},
		{name: "zero duration", pod: pod("0s", true), now: start, invalid: true},
		{name: "negative duration", pod: pod("-5m", true), now: start, invalid: true},
		{name: "garbage", pod: pod("yes", true), now: start, invalid: true},
		{name: "days are not Go durations", pod: pod("1d", true), now: start, invalid: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := v1.PodDoNotDisrupt(c.pod, c.now)
			if got.Active != c.active || !got.Until.Equal(c.until) || (got.Err != nil) != c.invalid {
				t.Errorf("PodDoNotDisrupt = %+v; want active %v until %v invalid %v", got, c.active, c.until, c.invalid)
			}
		})
	}
}
