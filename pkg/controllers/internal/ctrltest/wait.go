package ctrltest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Timeout bounds every wait.
const Timeout = 30 * time.Second

// Eventually polls cond every 50ms until it holds, failing t after Timeout with what cond last
// described.
func Eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, Timeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %s)", what, err, last)
	}
}

// Get reads an object by name (and namespace), reporting whether it exists.
func (e *Env) Get(t *testing.T, ns, name string, obj client.Object) bool {
	t.Helper()
	err := e.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("getting %T %s: %v", obj, name, err)
	}
	return true
}

// Claim reads a NodeClaim; nil when it does not exist.
func (e *Env) Claim(t *testing.T, name string) *apisv1.NodeClaim {
	t.Helper()
	c := &apisv1.NodeClaim{}
	if !e.Get(t, "", name, c) {
		return nil
	}
	return c
}

// Node reads a Node; nil when it does not exist.
func (e *Env) Node(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{}
	if !e.Get(t, "", name, n) {
		return nil
	}
	return n
}

// WaitCondition waits until the NodeClaim's condition of type cond is True and returns the
// claim.
func (e *Env) WaitCondition(t *testing.T, name, cond string) *apisv1.NodeClaim {
	t.Helper()
	var claim *apisv1.NodeClaim
	Eventually(t, "NodeClaim "+name+" becomes "+cond, func() (bool, string) {
		claim = e.Claim(t, name)
		if claim == nil {
			return false, "the NodeClaim does not exist"
		}
		return claim.IsTrue(cond), fmt.Sprintf("%+v", claim.Status.Conditions)
	})
	return claim
}

// WaitGone waits until the object no longer exists.
func (e *Env) WaitGone(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	Eventually(t, fmt.Sprintf("%T %s is deleted", obj, name), func() (bool, string) {
		if !e.Get(t, ns, name, obj) {
			return true, ""
		}
		return false, fmt.Sprintf("deletion %v finalizers %v", obj.GetDeletionTimestamp(), obj.GetFinalizers())
	})
}

// PodRunning waits until the pod runs on node.
func (e *Env) PodRunning(t *testing.T, ns, name, node string) {
	t.Helper()
	Eventually(t, "pod "+ns+"/"+name+" runs on "+node, func() (bool, string) {
		pod := &corev1.Pod{}
		if !e.Get(t, ns, name, pod) {
			return false, "no pod"
		}
		return pod.Spec.NodeName == node && pod.Status.Phase == corev1.PodRunning,
			fmt.Sprintf("node %q phase %s conditions %+v", pod.Spec.NodeName, pod.Status.Phase, pod.Status.Conditions)
	})
}

// Events returns the events recorded about the object called name (in any namespace) with
// the given reason.
func (e *Env) Events(t *testing.T, name, reason string) []corev1.Event {
	t.Helper()
	list := &corev1.EventList{}
	if err := e.Client.List(context.Background(), list, client.MatchingFields{"involvedObject.name": name}); err != nil {
		t.Fatalf("listing events: %v", err)
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

// WaitEvent waits for an event with reason about the object called name.
func (e *Env) WaitEvent(t *testing.T, name, reason string) corev1.Event {
	t.Helper()
	var found corev1.Event
	Eventually(t, "event "+reason+" about "+name, func() (bool, string) {
		evs := e.Events(t, name, reason)
		if len(evs) == 0 {
			return false, "none"
		}
		found = evs[0]
		return true, ""
	})
	return found
}
