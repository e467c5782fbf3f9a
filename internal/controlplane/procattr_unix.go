//go:build unix && !linux

package controlplane

import "syscall"

// sysProcAttr puts each component in its own process group, so Stop can signal it and anything
// it spawned at once. Only Linux has Pdeathsig: elsewhere a killed parent leaves its components
// running until they are killed by hand.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
