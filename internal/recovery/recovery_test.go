package recovery

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestGuardTurnsAPanicIntoACountedError(t *testing.T) {
	before := testutil.ToFloat64(Panics.WithLabelValues("guard-test"))
	err := Guard(logr.Discard(), "guard-test", func() error {
		var m map[string]int
		m["x"] = 1 // a nil-map write: a runtime panic
		return nil
	})
	var perr *PanicError
	if !errors.As(err, &perr) || perr.Controller != "guard-test" || !strings.Contains(perr.Error(), "nil map") {
		t.Fatalf("got %v; want a *PanicError of guard-test naming the panic", err)
	}
	if !strings.Contains(string(perr.Stack), "TestGuardTurnsAPanicIntoACountedError") {
		t.Errorf("the stack must reach the panicking function:\n%s", perr.Stack)
	}
	if got := testutil.ToFloat64(Panics.WithLabelValues("guard-test")); got != before+1 {
		t.Errorf("tenon_controller_panics_total went from %v to %v", before, got)
	}
	if err := Guard(logr.Discard(), "guard-test", func() error { return errors.New("plain") }); err == nil || err.Error() != "plain" {
		t.Errorf("an error must come back as it is: %v", err)
	}
}

func TestReconcilerRecordsThePanicOnTheObjectAndFails(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1"}}
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(node).Build()
	rec := record.NewFakeRecorder(10)
	calls := 0
	r := Reconciler("node-test", reader, rec, func() client.Object { return &corev1.Node{} },
		reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			calls++
			if calls == 1 {
				panic("bad node")
			}
			return reconcile.Result{}, nil
		}))
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "n1"}}
	if _, err := r.Reconcile(context.Background(), req); !errors.As(err, new(*PanicError)) {
		t.Fatalf("a reconcile that panicked must fail with a *PanicError (so it is retried), got %v", err)
	}
	select {
	case ev := <-rec.Events:
		if !strings.HasPrefix(ev, "Warning "+EventPanic) || !strings.Contains(ev, "bad node") {
			t.Errorf("event %q", ev)
		}
	default:
		t.Error("no event on the reconciled object")
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Errorf("the retry must run the reconciler again: %v", err)
	}
}

func TestTestHookPanicsInsideTheGuard(t *testing.T) {
	restore := SetTestHook(func(c string) {
		if c == "hooked" {
			panic("injected")
		}
	})
	defer restore()
	if err := Guard(logr.Discard(), "hooked", func() error { return nil }); !errors.As(err, new(*PanicError)) {
		t.Errorf("the hook's panic must be recovered by the guard: %v", err)
	}
	if err := Guard(logr.Discard(), "other", func() error { return nil }); err != nil {
		t.Errorf("other controllers are untouched: %v", err)
	}
}
