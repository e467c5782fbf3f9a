package controlplane

import (
	"net"
	"strings"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago. Another process may take
// it before the component binds it; launch notices ("address already in use") and retries
// with another port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portConflict reports whether a component's log says it could not bind its port.
func portConflict(log string) bool {
	return strings.Contains(log, "address already in use")
}
