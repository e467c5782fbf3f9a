//go:build linux

package controlplane_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tenon-sh/tenon/internal/controlplane"
)

const helperEnv = "TENON_CONTROLPLANE_ORPHAN_HELPER"

// TestComponentsDieWithKilledParent SIGKILLs a process that started a control plane without
// stopping it, and checks its components die too (Pdeathsig) instead of living on as orphans.
func TestComponentsDieWithKilledParent(t *testing.T) {
	// Become the subreaper of the helper's orphans, so this test reaps them rather than leaving
	// zombies to a PID 1 that may not reap.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) }()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	var workDir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "HELPER-FAILED "); ok {
			t.Fatalf("helper could not start the control plane: %s", rest)
		}
		if rest, ok := strings.CutPrefix(line, "HELPER-READY "); ok {
			f := strings.Fields(rest)
			workDir = f[0]
			for _, s := range f[1:] {
				pid, err := strconv.Atoi(s)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, pid)
			}
			break
		}
	}
	defer os.RemoveAll(workDir)
	defer func() { // on failure, leave no orphans behind
		for _, pid := range pids {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()
	if len(pids) != 2 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper reported pids %v, want etcd's and kube-apiserver's", pids)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for !reaped(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("component %d outlived its killed parent", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestOrphanHelper is the parent TestComponentsDieWithKilledParent kills; it does nothing
// unless run by that test.
func TestOrphanHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		fmt.Println("HELPER-FAILED", strings.ReplaceAll(err.Error(), "\n", " | "))
		return
	}
	line := "HELPER-READY " + cp.WorkDir()
	for pid := range controlplane.PIDs(cp) {
		line += " " + strconv.Itoa(pid)
	}
	fmt.Println(line)
	time.Sleep(time.Minute) // killed by the parent long before
}

// reaped reports whether pid, an orphan this process is subreaper of, has exited (and reaps
// it).
func reaped(pid int) bool {
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	if errors.Is(err, syscall.ECHILD) { // not ours: gone already, or another reaper's
		_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
		return err != nil
	}
	return got == pid
}
