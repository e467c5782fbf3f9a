package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/plan"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

func newPlan() *cobra.Command {
	var files, nodes []string
	var region, output string
	var minValues solver.MinValuesPolicy
	var boundBudget time.Duration
	var recursive bool
	var expendableCutoff int32
	cmd := &cobra.Command{
		Use:   "plan -f nodepools.yaml -f workload.yaml [--nodes existing.yaml]",
		Short: "Show the nodes tenon would buy for a workload, offline",
		Long: `plan runs tenon's solver over manifests, with no cluster: NodePools (and a simulated
NodeClass, if given), workloads (Pods, Deployments, StatefulSets, Jobs, CronJobs, ReplicaSets)
expanded into the pods their controllers would create, DaemonSets, RuntimeClasses (overhead and
scheduling), and StorageClasses, PersistentVolumeClaims and PersistentVolumes (a pod goes where
its volumes can be; a pod whose claim does not exist is unschedulable). --nodes adds a
cluster's existing Nodes and the Pods bound to them. Kinds it does not read are named on
standard error, once per kind. It prints the NodeClaims it would create with their
price, the pods that fit on existing nodes, the pods that cannot be scheduled and why, the
total $/h, and a proven lower bound on what any plan must cost. A directory given with -f
or --nodes is read for its own .yaml, .yml and .json files; -R reads the directories below
it too, as kubectl does.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("no manifests: give at least one -f FILE")
			}
			if output != "table" && output != "json" {
				return fmt.Errorf("unknown output format %q: use table or json", output)
			}
			work, err := manifest.LoadWith(manifest.LoadOptions{Recursive: recursive}, files...)
			if err != nil {
				return err
			}
			var existing *manifest.Set
			if len(nodes) > 0 {
				if existing, err = manifest.LoadWith(manifest.LoadOptions{Recursive: recursive}, nodes...); err != nil {
					return err
				}
			}
			if len(work.NodePools) == 0 {
				return fmt.Errorf("the manifests define no NodePool: tenon can only buy nodes through a NodePool")
			}
			in, err := plan.Build(work, existing, plan.Options{Region: region, ExpendablePriorityCutoff: &expendableCutoff, InstanceTypes: plan.FirstOf(plan.SimulatedInstanceTypes(time.Now()), plan.EC2NodeClassInstanceTypes(region))})
			if err != nil {
				return err
			}
			in.WriteIgnored(cmd.ErrOrStderr())
			opts := solver.Options{MinValuesPolicy: minValues}
			if boundBudget > 0 {
				// The wall clock is the driver's: the solver only asks whether time is up. The
				// budget starts when the bound first asks, after the plan is made.
				var deadline time.Time
				opts.BoundDeadline = func() bool {
					if deadline.IsZero() {
						deadline = time.Now().Add(boundBudget)
					}
					return time.Now().After(deadline)
				}
			}
			p, err := solver.Solve(in.Snapshot, opts)
			if err != nil {
				return err
			}
			bill, committed := in.Launch(p)
			res := plan.NewResult(p, in.Rejected...)
			if committed {
				res.SetBill(bill, in.Commitments)
			}
			if output == "json" {
				return res.WriteJSON(cmd.OutOrStdout())
			}
			return res.WriteTable(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file or directory (repeatable; - for stdin)")
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "read the directories below a -f or --nodes directory too, as kubectl's -R")
	cmd.Flags().StringArrayVar(&nodes, "nodes", nil, "manifests of existing Nodes and the Pods bound to them (repeatable)")
	cmd.Flags().StringVar(&region, "region", "us-east-1", "region of the instance catalog for NodePools without a simulated NodeClass")
	cmd.Flags().Var(&minValues, "min-values-policy", "Strict or BestEffort, as tenon controller's flag")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	cmd.Flags().Int32Var(&expendableCutoff, "expendable-pods-priority-cutoff", scheduling.DefaultExpendableCutoff, "pods of a priority below this are expendable: no capacity is planned for them, as tenon controller's flag")
	cmd.Flags().DurationVar(&boundBudget, "bound-budget", 0, "wall-clock budget of the lower bound's LPs, from when the plan is made (0: none); the bound stays valid, only looser, and the output says when the budget cut it short")
	return cmd
}
