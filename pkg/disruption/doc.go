// Package disruption decides which nodes tenon removes or replaces, and why. It is pure: the
// controller (and the simulator) gathers a Snapshot, Decide returns Commands with the nodes to
// remove, their replacements, the savings and the reason, and records why every other node was
// left alone. The controller executes and re-validates the commands.
//
// Methods run in order and the first that acts ends the pass: emptiness, drift, expiration,
// then consolidation (multi-node with at most one replacement, or when no such set exists an
// N→M repack of nodes quiet for Options.RepackAfter onto fewer new ones; then single-node
// delete or replace, 1→N splits and spot-to-spot included). Every simulation runs the same solver the provisioner runs, on one
// prepared snapshot per pass; candidates are ordered by what removing them saves (multi-node
// also tries the nodes whose price is most idle first), and a pass resumes where the last one
// stopped so that no node is starved.
//
// Each method is one file behind one small interface (method.go): the candidates it may take,
// its search among them, and the command for a given set of nodes, which Validate computes
// again on the fresh snapshot before the controller executes a command.
package disruption
