package recovery

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tenon-sh/tenon/pkg/metrics"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// EventPanic is the reason of the Warning event recorded on the object a recovered panic was
// about (the reconciled object, or the NodePools of a pass).
const EventPanic = "ControllerPanic"

// Panics counts the panics recovered, by controller. Reconciles that panic inside Reconciler
// are counted here and not in controller-runtime's controller_runtime_reconcile_panics_total,
// which only sees the panics that escape it.
var Panics = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "tenon_controller_panics_total",
	Help: "Panics recovered in a reconcile or a pass, by controller; the work item was skipped and the controller went on.",
}, []string{"controller"})

func init() { metrics.MustRegister(Panics) }

// PanicError is a recovered panic.
type PanicError struct {
	// Controller names the loop it happened in.
	Controller string
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%s: recovered from a panic: %v", e.Controller, e.Value)
}

// testHook, when set, is called at the start of every guarded region and reconcile.
var testHook atomic.Pointer[func(controller string)]

// SetTestHook makes every guarded region and wrapped reconcile call hook(controller) first,
// until the returned function is called; tests panic in it to prove the loops survive. Only
// tests call it.
func SetTestHook(hook func(controller string)) (restore func()) {
	testHook.Store(&hook)
	return func() { testHook.Store(nil) }
}

func callHook(controller string) {
	if h := testHook.Load(); h != nil {
		(*h)(controller)
	}
}

// Recovered turns a value recover returned into a *PanicError, counted and logged with its
// stack; call it in the deferred function that recovered, for the stack to be the panic's.
func Recovered(logger logr.Logger, controller string, r any) *PanicError {
	err := &PanicError{Controller: controller, Value: r, Stack: debug.Stack()}
	Panics.WithLabelValues(controller).Inc()
	logger.Error(err, "recovered from a panic; skipping this work item", "controller", controller, "stack", string(err.Stack))
	return err
}

// Guard runs fn as one work item of controller: a panic in it is recovered, counted, logged
// with its stack and returned as a *PanicError; otherwise fn's error is returned.
func Guard(logger logr.Logger, controller string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Recovered(logger, controller, r)
		}
	}()
	callHook(controller)
	return fn()
}

// Record records the Warning event of a recovered panic on each object.
func Record[T runtime.Object](rec record.EventRecorder, err *PanicError, objs ...T) {
	for _, o := range objs {
		rec.Eventf(o, corev1.EventTypeWarning, EventPanic, "%s skipped its work after a panic: %v", err.Controller, err.Value)
	}
}

// Reconciler wraps r so that a panic in a reconcile is recovered, counted, logged with its
// stack, recorded as an event on the reconciled object (read with reader into a fresh
// newObject(); no event when it cannot be read) and returned as the reconcile's error, so
// that the request is retried with backoff while the controller goes on with the others.
func Reconciler(controller string, reader client.Reader, rec record.EventRecorder, newObject func() client.Object, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			perr := Recovered(log.FromContext(ctx), controller, p)
			res, err = reconcile.Result{}, perr
			obj := newObject()
			if reader.Get(ctx, req.NamespacedName, obj) == nil {
				Record(rec, perr, obj)
			}
		}()
		callHook(controller)
		return r.Reconcile(metrics.WithController(ctx, controller), req)
	})
}
