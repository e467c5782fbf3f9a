// Package disruption runs tenon's disruption loop: the shell around the pure decision of
// package pkg/disruption. It owns every removal of capacity.
//
// Every Options.PassInterval (10s) the Controller reads a snapshot (Builder): each node tenon
// manages, with the price of its offering among its nodepool's instance types, its creation,
// initialization, readiness and deletion, its nominations and do-not-disrupt annotation, its
// drift (the nodepool's template hash on the claim no longer matches, a template requirement no
// longer allows one of its labels, or the cloud provider's IsDrifted, asked at most once per
// Options.DriftCheckInterval per claim), when it expires (the claim's creation plus its
// expireAfter, which the claim copies from the template when it is made) and when a pod last
// arrived on or left it; plus the solver's view of the cluster and the pending backlog, read
// exactly as the provisioner reads them. disruption.Decide then runs one pass from where the
// last one stopped.
//
// Each command of a pass runs on its own, concurrently with later passes; its nodes count as
// being deleted (against budgets, and never candidates again) until it ends:
//
//  1. it waits Options.ValidationDelay (15s) and is validated again on a fresh snapshot
//     (disruption.Validate); a command that no longer holds is dropped;
//  2. the candidates are tainted karpenter.sh/disrupted:NoSchedule;
//  3. the replacements are created as NodeClaims of their nodepools, as the provisioner would;
//  4. only then are the candidates marked for deletion in the mirror, so that the provisioner
//     plans their pods onto the replacements rather than buying the capacity again;
//  5. it waits for the replacements to initialize (Options.ReplacementTimeout, 10m);
//  6. each candidate's NodeClaim gets the DisruptionReason condition (Empty, Drifted,
//     Underutilized or Expired, with the command's message) and is deleted: the termination
//     controller drains the node, honouring PodDisruptionBudgets and do-not-disrupt until the
//     terminationGracePeriod.
//
// A step that fails rolls back what was done (marks, replacements, taints) and leaves the
// candidates alone for Options.FailureBackoff. A controller that stops in the middle of a
// command leaves it where it is; at start-up, before the first pass, every disrupted taint
// that no command owns is removed from nodes whose NodeClaim exists and is not being deleted.
//
// Events (through a de-duplicating recorder) on the candidates' Nodes and NodeClaims:
// DisruptionLaunching, DisruptionWaitingReadiness, DisruptionTerminating, DisruptionFailed;
// DisruptionBlocked on nodes a pass left alone for a reason someone can act on
// (do-not-disrupt, a PodDisruptionBudget, a budget, pods that would fit nowhere, ...);
// DisruptionTaintRemoved at start-up; Unconsolidatable (Karpenter's) on a Node and its
// NodeClaim that consolidation simulated and left (not cheaper, under the savings floor,
// spot-to-spot rules, pods that would fit nowhere, ...), with the reason as its message, at
// most once per object per 15 minutes. After each pass the NodeClaims' Drifted and
// Consolidatable conditions are brought up to date (see recordClaimStatus). Metrics:
//
//	tenon_disruption_pass_duration_seconds{outcome}        Acted, NoOp, Truncated, Error
//	tenon_disruption_candidates{method}                    nodes in the last pass's commands
//	tenon_disruption_skips{reason}                         nodes the last pass left alone
//	tenon_disruption_commands_total{method,action,result}  succeeded, invalidated, failed, abandoned
//	tenon_disruption_realized_savings_dollars_per_hour_total{from,to}  by capacity-type transition
//	tenon_nodes_price_dollars_per_hour{nodepool,capacity_type}  the managed nodes the pass saw
//
// and, under Karpenter's names (karpenter.go), karpenter_voluntary_disruption_decisions_total,
// _eligible_nodes and _decision_evaluation_duration_seconds, karpenter_nodepools_allowed_disruptions,
// karpenter_nodeclaims_disrupted_total and karpenter_pods_disruption_initiated_total for the
// claims commands delete (with their pods), and karpenter_nodeclaims_created_total for their
// replacements. docs/metrics.md describes them all.
//
// Explain answers, for one node, what a pass would do with it now; `tenon explain` prints it.
package disruption
