package controlplane

import (
	"fmt"
	"net"
	"strings"
	"sync"
)

// ports are the ports freePort has handed out in this process. The kernel may give the same
// free port to two listeners that open and close it one after the other, and the components
// start concurrently: two of them given one port would not both bind it, and the one that did
// would answer the other's readiness probe (kube-scheduler and kube-controller-manager serve
// the same certificate), so the loser's failure would go unnoticed. A port is handed out once.
var ports = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// listenPort returns a port on 127.0.0.1 the kernel says is free now (a variable for tests).
var listenPort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago and that no other
// component of this process was given. Another process may take it before the component binds
// it; launch notices ("address already in use") and retries with another port.
func freePort() (int, error) {
	ports.Lock()
	defer ports.Unlock()
	for range 100 {
		port, err := listenPort()
		if err != nil {
			return 0, err
		}
		if !ports.given[port] {
			ports.given[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("the kernel kept offering ports already given out (%d so far)", len(ports.given))
}

// FreePort is freePort for the processes a test runs beside a control plane (a controller's
// metrics and probe ports): it never returns a port a component of this process was given,
// bound or not (an API server restarting keeps its port).
func FreePort() (int, error) { return freePort() }

// portConflict reports whether a component's log says it could not bind its port.
func portConflict(log string) bool {
	return strings.Contains(log, "address already in use")
}
