package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/registry"
	disruptionctrl "github.com/tenon-sh/tenon/pkg/controllers/disruption"
	"github.com/tenon-sh/tenon/pkg/controllers/nodeoverlay"
	"github.com/tenon-sh/tenon/pkg/disruption"
	"github.com/tenon-sh/tenon/pkg/featuregates"
	"github.com/tenon-sh/tenon/pkg/operator"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

func newExplain() *cobra.Command {
	var kubeconfig, kubeContext, cloud string
	var schedulers []string
	var decision disruption.Options
	var static, overlays bool
	var awsCfg aws.Config
	cmd := &cobra.Command{
		Use:   "explain node/NAME",
		Short: "Say why a node is or is not being disrupted now",
		Long: `explain reads the cluster once, builds the snapshot tenon's disruption loop builds, runs one
pass of it, and prints what that pass would do with the node: the command it would be in (the
method, the replacements and what they save), or why it is left alone (the reason code and its
message), with the node's price, age, state and pods. Nothing is changed in the cluster. Give
it the decision flags the controller runs with (savings floors, spot-to-spot, ...); the
controller's own pass may then differ only by what it is already doing (commands running) and
by where its previous pass stopped.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nodeArg(args[0])
			if err != nil {
				return err
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = kubeconfig
			cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
			if err != nil {
				return fmt.Errorf("reading the kubeconfig: %w", err)
			}
			c, err := client.New(cfg, client.Options{Scheme: operator.Scheme})
			if err != nil {
				return err
			}
			if err := fromKarpenterEnv(cmd.Flags()); err != nil {
				return err
			}
			provider, err := registry.Build(cloud, registry.Env{Client: c, RESTConfig: cfg, AWS: awsCfg})
			if err != nil {
				return err
			}
			if overlays {
				var problems []string
				if provider, problems, err = nodeoverlay.Once(cmd.Context(), c, provider); err != nil {
					return err
				}
				for _, p := range problems {
					fmt.Fprintf(cmd.ErrOrStderr(), "tenon explain: %s\n", p)
				}
			}
			ex, err := disruptionctrl.Explain(cmd.Context(), disruptionctrl.ExplainDeps{Reader: c, Cloud: provider, Schedulers: schedulers, StaticCapacity: static}, name, decision)
			if err != nil {
				return err
			}
			return writeExplanation(cmd.OutOrStdout(), ex, time.Now())
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, as kubectl)")
	cmd.Flags().StringVar(&kubeContext, "context", "", "kubeconfig context (default: the current one)")
	cmd.Flags().StringVar(&cloud, "cloud-provider", registry.Default, "cloud provider the cluster's nodes come from: "+strings.Join(registry.Names(), ", "))
	cmd.Flags().StringSliceVar(&schedulers, "scheduler-names", nil, "scheduler names whose pending pods tenon provisions for (default default-scheduler)")
	registerDecisionFlags(cmd.Flags(), &decision, func(g featuregates.Gates) { static, overlays = g.StaticCapacity, g.NodeOverlay })
	registerAWSFlags(cmd.Flags(), &awsCfg)
	return cmd
}

// nodeArg reads node/NAME (or nodes/NAME, or a bare NAME).
func nodeArg(arg string) (string, error) {
	kind, name, found := strings.Cut(arg, "/")
	if !found {
		kind, name = "node", arg
	}
	switch {
	case kind != "node" && kind != "nodes" && kind != "no":
		return "", fmt.Errorf("explain knows nodes only: give node/NAME, not %q", arg)
	case name == "":
		return "", fmt.Errorf("no node name in %q: give node/NAME", arg)
	}
	return name, nil
}

// writeExplanation prints an explanation for a person.
func writeExplanation(out io.Writer, ex *disruptionctrl.Explanation, now time.Time) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	owner := "not managed by tenon"
	if ex.NodeClaim != "" {
		owner = fmt.Sprintf("NodeClaim %s, NodePool %s", ex.NodeClaim, orNone(ex.NodePool))
	}
	p("Node:\t%s (%s)", ex.Node, owner)
	if e := ex.Entry; e != nil {
		priced := fmt.Sprintf("$%.4f/h", e.Price)
		if ex.PriceUnknown {
			priced = "price unknown (its offering is not among its nodepool's instance types)"
		}
		p("Instance:\t%s, %s, %s: %s", orNone(e.InstanceType), orNone(e.CapacityType), orNone(e.Zone), priced)
		p("Age:\t%s", duration.HumanDuration(now.Sub(e.CreatedAt)))
		p("State:\t%s", nodeState(e))
		if e.ExpireAt.IsZero() {
			p("Expires:\tnever")
		} else if e.ExpireAt.After(now) {
			p("Expires:\tin %s (%s)", duration.HumanDuration(e.ExpireAt.Sub(now)), e.ExpireAt.UTC().Format(time.RFC3339))
		} else {
			p("Expires:\texpired %s ago", duration.HumanDuration(now.Sub(e.ExpireAt)))
		}
		p("Drift:\t%s", orNone(e.Drifted))
		if !e.LastPodEvent.IsZero() {
			p("Last pod event:\t%s ago", duration.HumanDuration(now.Sub(e.LastPodEvent)))
		}
	}
	p("Pods:\t%d", len(ex.Pods))
	for _, pod := range ex.Pods {
		p("  %s/%s\t%s", pod.Namespace, pod.Name, podNote(pod))
	}
	if ex.Tainted {
		p("Note:\tit carries %s: a disruption command or its termination is already at work on it", apisv1.DisruptedTaintKey)
	}
	switch {
	case ex.Command != nil:
		cmd := ex.Command
		p("Disruption:\twould be disrupted now, by %s (%s)", cmd.Method, cmd.Action)
		p("  %s", cmd.Message)
		if len(cmd.Candidates) > 1 {
			p("  Together with:\t%s", strings.Join(others(cmd.Candidates, ex.Node), ", "))
		}
		for _, r := range cmd.Replacements {
			p("  Replacement:\t%s", replacement(r))
		}
		if cmd.Method == disruption.MethodConsolidation {
			p("  Saves:\t$%.4f/h of $%.4f/h", cmd.Savings, cmd.Price)
		}
		p("  Evicts:\t%d pod(s)", len(cmd.Pods))
	case ex.Skip != nil:
		p("Disruption:\tleft alone (%s)", ex.Skip.Reason)
		p("  %s", ex.Skip.Message)
	case ex.Entry == nil:
		p("Disruption:\tnever: %s", orNone(ex.Excluded))
	case ex.Decision != nil && len(ex.Decision.Commands) > 0:
		p("Disruption:\tnot considered this pass: it acted by %s on %d other node(s) first, and the first method that acts ends a pass",
			ex.Decision.Commands[0].Method, countCandidates(ex.Decision.Commands))
	default:
		p("Disruption:\tnothing to do: it is not empty, drifted or expired, and consolidation did not reach it (%s)", ex.Decision.Outcome)
	}
	for _, warn := range ex.Warnings {
		p("Warning:\t%s", warn)
	}
	return w.Flush()
}

func nodeState(e *disruption.Node) string {
	var s []string
	add := func(cond bool, yes, no string) {
		switch {
		case cond && yes != "":
			s = append(s, yes)
		case !cond && no != "":
			s = append(s, no)
		}
	}
	add(e.Initialized, "initialized", "not initialized")
	add(e.NotReady, "not ready", "ready")
	add(e.Deleting, "being deleted", "")
	add(e.Nominated, "nominated for pending pods", "")
	add(e.DoNotDisrupt, "annotated "+apisv1.DoNotDisruptAnnotationKey, "")
	return strings.Join(s, ", ")
}

func podNote(pod *corev1.Pod) string {
	var notes []string
	if r, err := scheduling.PodRequests(pod); err == nil {
		notes = append(notes, fmt.Sprintf("%dm cpu, %s memory", r[scheduling.CPU], humanBytes(r[scheduling.Memory])))
	}
	if !solver.Reschedulable(pod) {
		notes = append(notes, "stays with the node (DaemonSet, static or finished)")
	}
	if v, ok := pod.Annotations[apisv1.DoNotDisruptAnnotationKey]; ok {
		notes = append(notes, apisv1.DoNotDisruptAnnotationKey+"="+v)
	}
	return strings.Join(notes, "; ")
}

func humanBytes(b int64) string {
	const gi, mi = 1 << 30, 1 << 20
	switch {
	case b >= gi && b%gi == 0:
		return fmt.Sprintf("%dGi", b/gi)
	case b >= mi:
		return fmt.Sprintf("%dMi", b/mi)
	}
	return fmt.Sprintf("%d", b)
}

func replacement(r *solver.Claim) string {
	if r.InstanceType == nil {
		return fmt.Sprintf("a NodeClaim of nodepool %s for $%.4f/h", r.NodePool, r.Price)
	}
	return fmt.Sprintf("%s (%s, %s) of nodepool %s for $%.4f/h, %d instance type(s) allowed",
		r.InstanceType.Name, r.Offering.CapacityType, r.Offering.Zone, r.NodePool, r.Price, len(r.InstanceTypes))
}

func others(names []string, self string) []string {
	var out []string
	for _, n := range names {
		if n != self {
			out = append(out, n)
		}
	}
	return out
}

func countCandidates(cmds []disruption.Command) int {
	n := 0
	for _, c := range cmds {
		n += len(c.Candidates)
	}
	return n
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
