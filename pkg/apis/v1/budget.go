package v1

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// UnlimitedDisruptions is what AllowedDisruptions returns when no active budget applies.
const UnlimitedDisruptions = math.MaxInt32

// AllowedDisruptions returns how many of the NodePool's totalNodes may be disrupting at once
// for reason at time now: the smallest allowance among the active budgets that apply to the
// reason, or UnlimitedDisruptions when none does. A budget that cannot be evaluated (an
// unparsable schedule or node count, which validation should have refused) allows nothing.
func (in *NodePool) AllowedDisruptions(now time.Time, totalNodes int, reason DisruptionReason) int {
	allowed := UnlimitedDisruptions
	for i := range in.Spec.Disruption.Budgets {
		b := &in.Spec.Disruption.Budgets[i]
		if !b.AppliesTo(reason) {
			continue
		}
		n, err := b.Allowed(now, totalNodes)
		if err != nil {
			return 0
		}
		allowed = min(allowed, n)
	}
	return allowed
}

// AppliesTo reports whether the budget limits disruptions for reason.
func (in *Budget) AppliesTo(reason DisruptionReason) bool {
	return len(in.Reasons) == 0 || slices.Contains(in.Reasons, reason)
}

// Allowed returns how many of totalNodes the budget lets be disrupting at now:
// UnlimitedDisruptions when its window is closed, otherwise its node count, with a percentage
// of totalNodes rounded up (10% of 15 nodes allows 2).
func (in *Budget) Allowed(now time.Time, totalNodes int) (int, error) {
	active, err := in.IsActive(now)
	if err != nil {
		return 0, err
	}
	if !active {
		return UnlimitedDisruptions, nil
	}
	return in.nodeCount(totalNodes)
}

func (in *Budget) nodeCount(totalNodes int) (int, error) {
	if pct, ok := strings.CutSuffix(in.Nodes, "%"); ok {
		p, err := strconv.Atoi(pct)
		if err != nil || p < 0 || p > 100 {
			return 0, fmt.Errorf("budget nodes %q is not a percentage from 0%% to 100%%", in.Nodes)
		}
		return (p*totalNodes + 99) / 100, nil
	}
	n, err := strconv.Atoi(in.Nodes)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("budget nodes %q is not a non-negative count or a percentage", in.Nodes)
	}
	return n, nil
}

// IsActive reports whether the budget's window is open at now. A budget without a schedule is
// always active. With one, the window opens at each scheduled time (UTC) and stays open for
// the duration: now is inside it when a scheduled time lies in (now-duration, now].
func (in *Budget) IsActive(now time.Time) (bool, error) {
	if in.Schedule == nil && in.Duration == nil {
		return true, nil
	}
	if in.Schedule == nil || in.Duration == nil {
		return false, fmt.Errorf("budget has a schedule or a duration but not both")
	}
	schedule, err := cron.ParseStandard("TZ=UTC " + *in.Schedule)
	if err != nil {
		return false, fmt.Errorf("budget schedule %q: %w", *in.Schedule, err)
	}
	now = now.UTC()
	next := schedule.Next(now.Add(-in.Duration.Duration))
	return !next.After(now), nil
}
