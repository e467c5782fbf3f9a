//go:build linux

package controlplane

import "syscall"

// sysProcAttr puts each component in its own process group, so Stop can signal it and anything
// it spawned at once, and has the kernel SIGKILL it when the thread that started it dies: the
// component does not outlive a test binary or `tenon up` that is killed without calling Stop.
// (Pdeathsig follows the starting OS thread, not the process; startProcess therefore starts
// components from a fresh goroutine, whose thread the Go runtime never retires.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
