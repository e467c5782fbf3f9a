package operator_test

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tenon-sh/tenon/pkg/operator"
)

// A Lease is held while it names a holder and its last renewal (or acquisition) plus its
// duration lies ahead; a leader that released it on exit (empty holder) holds nothing.
func TestHeldLease(t *testing.T) {
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.MicroTime { return ptr.To(metav1.NewMicroTime(now.Add(d))) }
	lease := func(holder string, duration int32, acquire, renew *metav1.MicroTime) *coordinationv1.Lease {
		l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{AcquireTime: acquire, RenewTime: renew}}
		if holder != "-" {
			l.Spec.HolderIdentity = &holder
		}
		if duration > 0 {
			l.Spec.LeaseDurationSeconds = &duration
		}
		return l
	}
	for _, c := range []struct {
		name    string
		lease   *coordinationv1.Lease
		held    bool
		expires time.Time
	}{
		{"renewed 5s ago, 15s lease", lease("k_1", 15, at(-time.Hour), at(-5*time.Second)), true, now.Add(10 * time.Second)},
		{"renewed 16s ago, 15s lease", lease("k_1", 15, at(-time.Hour), at(-16*time.Second)), false, now.Add(-time.Second)},
		{"expires exactly now", lease("k_1", 15, nil, at(-15*time.Second)), false, now},
		{"acquired, never renewed", lease("k_1", 15, at(-3*time.Second), nil), true, now.Add(12 * time.Second)},
		{"released on exit", lease("", 1, at(-time.Hour), at(0)), false, time.Time{}},
		{"no holder field", lease("-", 15, nil, at(0)), false, time.Time{}},
		{"no duration", lease("k_1", 0, nil, at(0)), false, time.Time{}},
		{"no times", lease("k_1", 15, nil, nil), false, time.Time{}},
		{"nil", nil, false, time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			held, _, expires := operator.HeldLease(c.lease, now)
			if held != c.held || !expires.Equal(c.expires) {
				t.Errorf("HeldLease = %t until %v, want %t until %v", held, expires, c.held, c.expires)
			}
		})
	}
}
