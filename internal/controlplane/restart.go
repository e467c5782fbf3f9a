package controlplane

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"time"
)

// RestartAPIServer stops kube-apiserver and starts it again on the same port, etcd and
// credentials, as a rolling upgrade of the API server does: clients keep their address and
// certificates, their watches break and must resume. kill sends SIGKILL at once (a crash);
// otherwise it gets SIGTERM and five seconds. The server stays down for at least down, and
// RestartAPIServer returns once it answers /readyz again. The other components keep running
// and reconnect by themselves.
func (c *ControlPlane) RestartAPIServer(ctx context.Context, down time.Duration, kill bool) error {
	u, err := url.Parse(c.apiURL)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return fmt.Errorf("kube-apiserver's address %s: %w", c.apiURL, err)
	}
	var old *process
	c.mu.Lock()
	for _, p := range c.procs {
		if p.name == APIServer && !p.exited() {
			old = p
		}
	}
	c.mu.Unlock()
	if old == nil {
		return fmt.Errorf("kube-apiserver is not running")
	}
	grace := stopGrace
	if kill {
		grace = 0
	}
	old.stop(grace)

	select {
	case <-time.After(down):
	case <-ctx.Done():
		return ctx.Err()
	}
	s := c.apiserverSpec(c.etcdPort)
	for attempt := 1; ; attempt++ {
		args := mergeArgs(s.args(port), c.opts.ExtraArgs[APIServer])
		p, err := startProcess(APIServer, filepath.Join(c.binDir, APIServer), args, c.workDir, c.logPath(APIServer), c.opts.Logs, c.onExit)
		if err != nil {
			return err
		}
		c.track(p)
		if err = waitReady(ctx, p, s.probe(port)); err == nil {
			return nil
		}
		p.stop(0)
		// The old server's port may linger for a moment after it exits.
		if attempt < launchAttempts && ctx.Err() == nil && portConflict(tailFile(p.logPath, 50)) {
			time.Sleep(time.Second)
			continue
		}
		return fmt.Errorf("restarting kube-apiserver: %w", err)
	}
}
