package events

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
}

func drain(f *record.FakeRecorder) int {
	n := 0
	for {
		select {
		case <-f.Events:
			n++
		default:
			return n
		}
	}
}

func TestDuplicatesAreHeldBackWithinTheWindow(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	f := record.NewFakeRecorder(100)
	r := New(f, Options{Window: time.Minute, QPS: 1000, Burst: 1000, Clock: clk})
	a, b := pod("a"), pod("b")
	r.Eventf(a, corev1.EventTypeNormal, "Nominated", "on %s", "x")
	r.Eventf(a, corev1.EventTypeNormal, "Nominated", "on %s", "x")
	r.Eventf(a, corev1.EventTypeNormal, "Nominated", "on %s", "y") // a different message is news
	r.Eventf(b, corev1.EventTypeNormal, "Nominated", "on %s", "x") // so is another object
	if got := drain(f); got != 3 {
		t.Fatalf("sent %d events, want 3", got)
	}
	clk.SetTime(clk.Now().Add(61 * time.Second))
	r.Eventf(a, corev1.EventTypeNormal, "Nominated", "on %s", "x")
	if got := drain(f); got != 1 {
		t.Fatalf("after the window sent %d events, want 1", got)
	}
}

func TestNormalEventsAreRateLimitedButWarningsAreNot(t *testing.T) {
	f := record.NewFakeRecorder(10000)
	r := New(f, Options{QPS: 0.001, Burst: 10})
	for i := 0; i < 100; i++ {
		r.Event(pod(string(rune('a'+i%26))+string(rune('a'+i/26))), corev1.EventTypeNormal, "Nominated", "x")
	}
	if got := drain(f); got != 10 {
		t.Fatalf("sent %d normal events, want the burst of 10", got)
	}
	for i := 0; i < 100; i++ {
		r.Event(pod(string(rune('a'+i%26))+string(rune('a'+i/26))), corev1.EventTypeWarning, "FailedScheduling", "x")
	}
	if got := drain(f); got != 100 {
		t.Fatalf("sent %d warnings, want all 100", got)
	}
}
