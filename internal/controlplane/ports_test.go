package controlplane

import "testing"

// Two components launched together must not be given one port, even when the kernel offers it
// twice (kube-controller-manager once lost its port to kube-scheduler this way, and the
// scheduler answered its readiness probe).
func TestFreePortNeverGivesAPortTwice(t *testing.T) {
	offered := []int{40001, 40001, 40001, 40002}
	saved := listenPort
	t.Cleanup(func() { listenPort = saved })
	listenPort = func() (int, error) {
		p := offered[0]
		offered = offered[1:]
		return p, nil
	}
	first, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	second, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if first != 40001 || second != 40002 {
		t.Fatalf("got ports %d and %d, want 40001 then 40002", first, second)
	}
}
