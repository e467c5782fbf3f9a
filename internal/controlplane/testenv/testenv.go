// Package testenv starts a real control plane (internal/controlplane) for a test.
//
//	func TestSomething(t *testing.T) {
//		cp := testenv.Start(t, controlplane.Options{Scheduler: true, ControllerManager: true, Kwok: true})
//		cs := kubernetes.NewForConfigOrDie(cp.RESTConfig())
//		...
//	}
//
// The binaries come from hack/build-controlplane.sh; when they are missing the test fails
// (it is never skipped) with a message saying to run that script.
package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/internal/controlplane"
)

// StartTimeout bounds how long Start waits for the control plane.
const StartTimeout = 90 * time.Second

// Start starts a control plane with opts and registers its Stop with t.Cleanup; if t has
// failed by then, the tail of every component's log is logged first. It fails t (FailNow)
// when the control plane cannot start, including when the binaries are missing.
func Start(t testing.TB, opts controlplane.Options) *controlplane.ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	began := time.Now()
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Logf("control plane ready in %v at %s (kubeconfig %s)", time.Since(began).Round(time.Millisecond), cp.APIServerURL(), cp.KubeconfigPath())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control-plane logs:\n%s", cp.LogTails(40))
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return cp
}
