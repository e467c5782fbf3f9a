package sim

// command is a disruption command being carried out: its replacements are launching.
type command struct {
	Command
	index   int32
	waiting int
	nodes   []*Node
	repl    []*Node
}

// execute carries out a disruption command: nodes already gone or disrupting make it void;
// replacements launch first, and the nodes go once every replacement is ready. A replacement
// the cloud refuses cancels the command.
func (r *run) execute(c Command) {
	nodes := make([]*Node, 0, len(c.Nodes))
	for _, id := range c.Nodes {
		n := r.nodes[id]
		if n.State == NodeGone || n.Disrupting {
			r.stats.Cancelled++
			return
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return
	}
	r.stats.Commands++
	r.met.command(&c, r.podsOn(nodes))
	if len(c.Replacements) == 0 {
		r.remove(nodes, c.Reason)
		return
	}
	cmd := &command{Command: c, index: int32(len(r.commands)), nodes: nodes}
	r.commands = append(r.commands, cmd)
	for _, n := range nodes {
		r.setDisrupting(n, true)
	}
	price := 0.0
	for _, n := range nodes {
		price += n.Price
	}
	for _, l := range c.Replacements {
		l.Pods = nil // the nodes' pods are evicted once the replacements are ready
		n := r.launch(l, cmd.index)
		if n == nil {
			r.cancel(cmd)
			return
		}
		cmd.repl = append(cmd.repl, n)
		cmd.waiting++
		price -= n.Price
	}
	// The cloud may have launched a dearer offering than the command counted on (the one it
	// chose had no room): a consolidation that saves nothing is not made. Expiration and drift
	// replace a node whatever the price.
	if price <= 0 && (c.Reason == ReasonUnderutilized || c.Reason == ReasonSpotToSpot) {
		r.cancel(cmd)
	}
}

// podsOn counts the pods bound or nominated to nodes.
func (r *run) podsOn(nodes []*Node) int {
	k := 0
	for _, n := range nodes {
		k += len(n.Pods)
	}
	return k
}

// cancel undoes a command whose replacement could not launch.
func (r *run) cancel(cmd *command) {
	r.stats.Cancelled++
	r.met.uncommand(&cmd.Command)
	for _, n := range cmd.nodes {
		if n.State != NodeGone {
			r.setDisrupting(n, false)
		}
	}
	for _, n := range cmd.repl {
		n.command = -1
	}
	r.remove(cmd.repl, reasonCancelled)
	cmd.waiting = -1
}

// replacementReady counts a replacement of cmd as ready; the last one sends the nodes away.
func (r *run) replacementReady(cmd *command) {
	if cmd.waiting <= 0 {
		return
	}
	cmd.waiting--
	if cmd.waiting > 0 {
		return
	}
	var nodes []*Node
	for _, n := range cmd.nodes {
		if n.State != NodeGone {
			nodes = append(nodes, n)
		}
	}
	r.remove(nodes, cmd.Reason)
}
