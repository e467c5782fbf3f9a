package controlplane

// PIDs returns the process ids of every component process c started, for tests that check
// none survives Stop.
func PIDs(c *ControlPlane) map[int]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int]string{}
	for _, p := range c.procs {
		out[p.pid] = p.name
	}
	return out
}
