// Package events wraps a Kubernetes event recorder so that a large batch cannot flood the API
// server: an event already sent for the same object with the same reason and message is not sent
// again within a window, and routine (Normal) events share a rate limit while warnings are always
// sent. Events held back are counted, never queued without bound.
package events

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tenon-sh/tenon/pkg/metrics"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Suppressed counts events not sent, by reason and why.
var Suppressed = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "tenon", Subsystem: "events", Name: "suppressed_total",
	Help: "Events not sent to the API server because an identical one was sent recently (duplicate) or routine events were over their rate (rate).",
}, []string{"reason", "why"})

// Options tune the recorder.
type Options struct {
	// Window is how long an identical event is not repeated. Zero means 5 minutes.
	Window time.Duration
	// QPS and Burst limit Normal events. Zero QPS means 50 per second with a burst of 500.
	QPS   float32
	Burst int
	Clock clock.PassiveClock
}

// Recorder is a record.EventRecorder with de-duplication and a rate limit for Normal events.
type Recorder struct {
	inner   record.EventRecorder
	window  time.Duration
	limiter flowcontrol.RateLimiter
	clock   clock.PassiveClock

	mu    sync.Mutex
	sent  map[key]time.Time
	prune time.Time
}

type key struct {
	uid     types.UID
	name    string
	reason  string
	message string
}

var _ record.EventRecorder = (*Recorder)(nil)

// New wraps inner.
func New(inner record.EventRecorder, o Options) *Recorder {
	if o.Window == 0 {
		o.Window = 5 * time.Minute
	}
	if o.QPS == 0 {
		o.QPS, o.Burst = 50, 500
	}
	if o.Burst == 0 {
		o.Burst = int(o.QPS)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &Recorder{
		inner: inner, window: o.Window, clock: o.Clock,
		limiter: flowcontrol.NewTokenBucketRateLimiter(o.QPS, o.Burst),
		sent:    map[key]time.Time{},
	}
}

// Event implements record.EventRecorder.
func (r *Recorder) Event(object runtime.Object, eventtype, reason, message string) {
	if r.admit(object, eventtype, reason, message) {
		r.inner.Event(object, eventtype, reason, message)
	}
}

// Eventf implements record.EventRecorder.
func (r *Recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf implements record.EventRecorder; annotated events are not de-duplicated.
func (r *Recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	r.inner.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
}

func (r *Recorder) admit(object runtime.Object, eventtype, reason, message string) bool {
	k := key{reason: reason, message: message}
	if o, ok := object.(client.Object); ok {
		k.uid, k.name = o.GetUID(), o.GetNamespace()+"/"+o.GetName()
	}
	now := r.clock.Now()
	r.mu.Lock()
	if now.Sub(r.prune) > r.window {
		for k, t := range r.sent {
			if now.Sub(t) >= r.window {
				delete(r.sent, k)
			}
		}
		r.prune = now
	}
	if t, ok := r.sent[k]; ok && now.Sub(t) < r.window {
		r.mu.Unlock()
		Suppressed.WithLabelValues(reason, "duplicate").Inc()
		return false
	}
	if eventtype != "Warning" && !r.limiter.TryAccept() {
		r.mu.Unlock()
		Suppressed.WithLabelValues(reason, "rate").Inc()
		return false
	}
	r.sent[k] = now
	r.mu.Unlock()
	return true
}

func init() { metrics.MustRegister(Suppressed) }
