package up

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tenon-sh/tenon/internal/controlplane"
)

// buildScript is the repository path of the script that builds the control-plane binaries.
const buildScript = "hack/build-controlplane.sh"

// coldBuild is how long a first build took on a 2-core machine (the estimate shown).
const coldBuild = 7 * time.Minute

// ensureBinaries returns the control-plane binary directory, building the binaries first when
// they are missing, with progress on out.
func ensureBinaries(ctx context.Context, out io.Writer) (string, error) {
	dir, err := controlplane.BinDir()
	if err == nil {
		return dir, nil
	}
	if !errors.Is(err, controlplane.ErrBinariesMissing) {
		return "", err
	}
	script, serr := findScript()
	if serr != nil {
		return "", fmt.Errorf("%v; %w", err, serr)
	}
	fmt.Fprintf(out, "The control plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubectl, kwok)\n")
	fmt.Fprintf(out, "is not built yet. Building it from the Go module proxy; this happens once and takes about\n")
	fmt.Fprintf(out, "%d minutes on 2 cores (the result is cached by version).\n", int(coldBuild.Minutes()))
	cmd := exec.CommandContext(ctx, "bash", script)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	cmd.Stdout = io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("running %s: %w", script, err)
	}
	done := make(chan struct{})
	var last string
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "[") {
				last = line
				fmt.Fprintf(out, "  %s  %s\n", elapsed(start), line)
			}
		}
	}()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	wait := make(chan error, 1)
	go func() { <-done; wait <- cmd.Wait() }()
	for {
		select {
		case err := <-wait:
			if err != nil {
				return "", fmt.Errorf("building the control plane failed (%s): %w; run %s to see its output", last, err, script)
			}
			fmt.Fprintf(out, "  %s  built\n", elapsed(start))
			return controlplane.BinDir()
		case <-tick.C:
			left := coldBuild - time.Since(start)
			est := "about " + left.Round(time.Minute).String() + " left"
			if left < time.Minute {
				est = "finishing (slower than the estimate)"
			}
			fmt.Fprintf(out, "  %s  still building: %s\n", elapsed(start), est)
		}
	}
}

// findScript looks for the build script in the working directory and its parents.
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, buildScript)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s not found: run tenon up from the tenon repository", buildScript)
		}
		dir = parent
	}
}

func elapsed(start time.Time) string {
	d := time.Since(start).Round(time.Second)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
