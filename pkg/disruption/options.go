package disruption

import (
	"fmt"
	"strconv"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/scheduling"
	"github.com/tenon-sh/tenon/pkg/solver"
)

// Annotations on a NodePool that override Options for it.
const (
	AnnotationMinSavingsFraction = "tenon.sh/consolidation-min-savings-fraction"
	AnnotationMinSavingsPerHour  = "tenon.sh/consolidation-min-savings-per-hour"
	AnnotationSpotToSpotMinTypes = "tenon.sh/spot-to-spot-min-instance-types"
	AnnotationSpotToSpotMinAge   = "tenon.sh/spot-to-spot-min-age"
	AnnotationBalancedThreshold  = "tenon.sh/balanced-threshold"
)

// Options tune a pass. The zero value takes the defaults.
type Options struct {
	// MinValuesPolicy is the policy the provisioner solves with (Strict, the default, or
	// BestEffort): a simulation that moves pods must follow the same rule the provisioner would,
	// or it plans replacements the provisioner would not launch.
	MinValuesPolicy solver.MinValuesPolicy
	// PreferencePolicy is the provisioner's too (Respect, the default, or Ignore): with Ignore
	// the simulations plan with pods' required constraints only, as the provisioner does.
	PreferencePolicy solver.PreferencePolicy
	// SpotToSpotConsolidation lets consolidation replace spot nodes by cheaper spot nodes
	// (Karpenter's feature gate of that name, off by default there and here). Off, a spot node
	// may still be deleted, or replaced by capacity that is not spot.
	SpotToSpotConsolidation bool
	// SpotToSpotMinInstanceTypes is how many instance types cheaper than a spot node its spot
	// replacement must be able to launch as (default 15; 1 suits GPU pools).
	SpotToSpotMinInstanceTypes int
	// SpotToSpotMinAge is how old a spot node must be before it is replaced by cheaper spot: a
	// node that was cheapest at launch is often undercut minutes later (default 10m).
	SpotToSpotMinAge time.Duration
	// MinSavingsFraction and MinSavingsPerHour are floors under what a consolidation command
	// must save: a fraction of the candidates' price and an absolute $/h (defaults 0.02 and
	// 0.001).
	MinSavingsFraction float64
	MinSavingsPerHour  float64
	// BalancedThreshold is the least score (savings fraction over disruption fraction) a
	// Balanced NodePool acts on (default 0.5).
	BalancedThreshold float64
	// MaxSimulations caps the solver runs of one pass (default 2000); the next pass resumes.
	MaxSimulations int
	// MaxMultiNode caps the candidates one multi-node command considers (default 100).
	MaxMultiNode int
	// MaxCommands caps the commands of one pass (default 10).
	MaxCommands int
	// RepackAfter lets multi-node consolidation, when no set of nodes fits one replacement,
	// move the largest set that fewer new nodes hold (N→M), among nodes that have gone this long
	// without a pod arriving or leaving (default 2h). Repacking only quiet nodes keeps its
	// churn off a workload that is still moving, where it costs more than it saves. NoRepack
	// turns it off.
	RepackAfter time.Duration
	NoRepack    bool
	// Cursor is where single-node consolidation resumes (the previous pass's Decision.Cursor).
	Cursor string
	// Memory is the previous pass's Decision.Memory: the consolidation verdicts that still
	// hold are taken from it instead of simulated again, and its prepared pools are reused
	// while they are the same (memory.go). A pod object given to a pass with a Memory must not
	// be changed afterwards: a pod that changes is a new object (as an informer's are), and
	// the next pass takes an object it saw before as the same pod.
	Memory *Memory
	// RejectionTTL is how long a remembered verdict is trusted at most (0: DefaultRejectionTTL;
	// negative: nothing is remembered).
	RejectionTTL time.Duration
	// ExpendablePriorityCutoff: pods of a priority below it are expendable (default
	// scheduling.DefaultExpendableCutoff, -10, as Cluster Autoscaler): a node's expendable pods
	// are evicted with it but need no place elsewhere, so a node holding only expendable pods
	// is empty. PodDisruptionBudgets and karpenter.sh/do-not-disrupt still hold for them.
	ExpendablePriorityCutoff *int32
}

func (o Options) withDefaults() Options {
	if o.ExpendablePriorityCutoff == nil {
		c := scheduling.DefaultExpendableCutoff
		o.ExpendablePriorityCutoff = &c
	}
	if o.RepackAfter <= 0 {
		o.RepackAfter = 2 * time.Hour
	}
	if o.SpotToSpotMinInstanceTypes <= 0 {
		o.SpotToSpotMinInstanceTypes = 15
	}
	if o.SpotToSpotMinAge == 0 {
		o.SpotToSpotMinAge = 10 * time.Minute
	}
	if o.MinSavingsFraction == 0 {
		o.MinSavingsFraction = 0.02
	}
	if o.MinSavingsPerHour == 0 {
		o.MinSavingsPerHour = 0.001
	}
	if o.BalancedThreshold == 0 {
		o.BalancedThreshold = 0.5
	}
	if o.MaxSimulations <= 0 {
		o.MaxSimulations = 2000
	}
	if o.MaxMultiNode <= 0 {
		o.MaxMultiNode = 100
	}
	if o.MaxCommands <= 0 {
		o.MaxCommands = 10
	}
	if o.RejectionTTL == 0 {
		o.RejectionTTL = DefaultRejectionTTL
	}
	return o
}

// fingerprint is the options' values as text, for Memory's context: every field but Cursor
// and Memory, which the caller clears.
func (o Options) fingerprint() string {
	cutoff := "nil"
	if o.ExpendablePriorityCutoff != nil {
		cutoff = strconv.Itoa(int(*o.ExpendablePriorityCutoff))
	}
	o.ExpendablePriorityCutoff = nil
	return fmt.Sprintf("%+v cutoff=%s", o, cutoff)
}

// forPool applies a NodePool's annotations over the options.
func (o Options) forPool(np *apisv1.NodePool) Options {
	if np == nil {
		return o
	}
	a := np.Annotations
	if v, err := strconv.ParseFloat(a[AnnotationMinSavingsFraction], 64); err == nil && v >= 0 {
		o.MinSavingsFraction = v
	}
	if v, err := strconv.ParseFloat(a[AnnotationMinSavingsPerHour], 64); err == nil && v >= 0 {
		o.MinSavingsPerHour = v
	}
	if v, err := strconv.Atoi(a[AnnotationSpotToSpotMinTypes]); err == nil && v > 0 {
		o.SpotToSpotMinInstanceTypes = v
	}
	if v, err := time.ParseDuration(a[AnnotationSpotToSpotMinAge]); err == nil && v >= 0 {
		o.SpotToSpotMinAge = v
	}
	if v, err := strconv.ParseFloat(a[AnnotationBalancedThreshold], 64); err == nil && v > 0 {
		o.BalancedThreshold = v
	}
	return o
}
