// Package sim replays a workload through autoscaling policies in virtual time, with no API
// server, and prices each fleet against a lower bound on what any fleet must cost. It is what
// `tenon simulate` runs.
//
// # Input
//
// A Workload is jobs of identical pods (Shapes) that arrive over time: ReadTrace reads a CSV
// trace (submit_s,duration_s,replicas,cpu_milli,memory_mib,gpu,gpu_type; rows that cannot be
// read are errors naming their line, rows that cannot be simulated are skipped and counted)
// and Trace.Workload turns it into pods; ScheduleWorkload takes manifests and a scaling
// Schedule. NewEnv resolves the NodePools and SimNodeClasses of the manifests into what the
// simulated cloud sells (pkg/cloudprovider/simulated).
//
// # The engine
//
// Each policy runs in its own run: a discrete-event loop over a priority queue of events in
// virtual time (job arrival, batch window closing, node ready, pod finish, disruption pass,
// spot interruption notice and deadline, instance shut down). No goroutine, no wall clock;
// every random draw comes from Options.Seed (boot delays here; instance IDs and spot
// interruptions in the simulated cloud's model, pkg/cloudprovider/simulated/cloud, which
// every run drives for launches, capacity, interruptions and shutdowns).
//
//	arrival → kube-scheduler (a ready node with room?) → pending → batcher (1 s idle, 10 s
//	max) → Provisioner → nodes launched (pods nominated) → boot + registration + device
//	plugin → ready: nominated pods bind and run for their duration → finish
//	every 10 s, when something changed: Disrupter → commands (replacements first, then the
//	nodes go and their pods are evicted and pending again)
//
// A Policy is a Provisioner, a Disrupter and a few switches. Policies see the cluster through
// a read-only View and answer with data (Decision, Command); the engine carries it out, so a
// policy cannot corrupt the books.
//
//   - tenon (TenonPolicy): the provisioner is pkg/solver, over a snapshot of the simulated
//     cluster, exactly as the controller calls it (the snapshot is cut to what can change
//     the plan; TestTenonSolvesAsTheSolverWould checks the cut against a plain solve). The
//     disrupter is an interim implementation of tenon's methods in this package; pkg/disruption
//     replaces it by implementing Disrupter.
//   - karpenter-like (KarpenterPolicy): Karpenter's documented scheduling and consolidation.
//   - node-groups (NodeGroupsPolicy): a Cluster-Autoscaler-style baseline.
//
// # Output
//
// Simulate runs the policies (in parallel, each independent and deterministic) and
// LowerBound, and returns a Report: costs, $/h and utilisation over time, pending times,
// nodes launched and disrupted, evictions, stranded GPU-hours, the instance-type mix, and
// every assumption made on the way. Package report formats it.
package sim
