package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/internal/controlplane"
)

// TestMain lets a test run this test binary as the tenon command: with TENON_TEST_RUN_MAIN=1
// it is main() with the arguments after the test flags.
func TestMain(m *testing.M) {
	if os.Getenv("TENON_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestUpInterruptedWithStdoutClosedCleansUp runs `tenon up` with its stdout a pipe whose
// reader goes away (as tee does on the same Ctrl-C), then sends SIGINT: tenon must not die of
// SIGPIPE, must exit 0 without an error, and must leave no control-plane directory (etcd's
// data and the cluster's private keys) in the temporary directory. The kubeconfig path must be
// printed, though stdout is not a terminal, as soon as the control plane is up.
func TestUpInterruptedWithStdoutClosedCleansUp(t *testing.T) {
	if _, err := controlplane.BinDir(); err != nil {
		t.Skipf("needs the cached control plane (TENON_CONTROLPLANE_BIN=$(hack/build-controlplane.sh --print)): %v", err)
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "up", "--log-file", filepath.Join(tmp, "up.log"))
	cmd.Env = append(os.Environ(), "TENON_TEST_RUN_MAIN=1", "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var kubeconfig string
	deadline := time.After(2 * time.Minute)
	for kubeconfig == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("tenon up ended before printing the kubeconfig; stderr:\n%s", stderr.String())
			}
			if rest, found := strings.CutPrefix(l, "Kubeconfig: "); found {
				kubeconfig = strings.Fields(rest)[0]
			}
		case <-deadline:
			t.Fatalf("no kubeconfig path printed within 2 minutes of start; stderr:\n%s", stderr.String())
		}
	}
	// Wait for the live view to run, then close the reader, as a dying tee does.
	for viewing := false; !viewing; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("tenon up ended before its live view; stderr:\n%s", stderr.String())
			}
			viewing = strings.Contains(l, " running, ")
		case <-deadline:
			t.Fatalf("no live view within 2 minutes of start; stderr:\n%s", stderr.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	if !strings.HasPrefix(kubeconfig, tmp) {
		t.Fatalf("kubeconfig %s is not under the test's TMPDIR %s", kubeconfig, tmp)
	}
	_ = stdout.(interface{ Close() error }).Close()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("tenon up did not exit within 60s of SIGINT")
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Errorf("tenon up was killed by %v (stderr:\n%s)", ws.Signal(), stderr.String())
		} else {
			t.Errorf("tenon up exited with %v; stderr:\n%s", err, stderr.String())
		}
	} else if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "%!") || strings.Contains(stderr.String(), "controller stopped") {
		t.Errorf("a clean stop printed an error: %s", stderr.String())
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "tenon-controlplane-*"))
	if len(left) > 0 {
		t.Errorf("tenon up left its control-plane directory behind: %v", left)
	}
}
