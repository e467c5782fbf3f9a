package up

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestControllerEndedIsCleanWhenAskedToStop(t *testing.T) {
	if err := controllerEnded(context.Canceled, nil); err != nil {
		t.Errorf("a controller that returned nil after Ctrl-C is a clean stop, got %v", err)
	}
	if err := controllerEnded(context.Canceled, errors.New("leader lost")); err != nil {
		t.Errorf("anything the controller returns once asked to stop is its shutdown, got %v", err)
	}
	err := controllerEnded(nil, nil)
	if err == nil || strings.Contains(err.Error(), "%!") {
		t.Errorf("a controller that returned nil by itself: %v; want an error without a formatting verb", err)
	}
	err = controllerEnded(nil, errors.New("boom"))
	if err == nil || err.Error() != "the controller stopped: boom" {
		t.Errorf("got %v", err)
	}
}

func TestFinalSummary(t *testing.T) {
	var b bytes.Buffer
	v := &view{out: &b}
	v.final(&Summary{Pods: 12, Running: 10, Nodes: 3, PricePerHour: 0.5}, nil)
	want := "\n10/12 pods running on 3 nodes for $0.5000/h.\nThe control plane stopped and its directory was removed.\n"
	if b.String() != want {
		t.Errorf("summary %q, want %q", b.String(), want)
	}
	b.Reset()
	v.final(nil, errors.New("permission denied"))
	if !strings.Contains(b.String(), "removing its directory failed: permission denied") {
		t.Errorf("a failed removal must be said: %q", b.String())
	}
}
