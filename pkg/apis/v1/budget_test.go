package v1_test

import (
	"testing"
	"time"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func budget(nodes string, schedule string, duration time.Duration, reasons ...v1.DisruptionReason) v1.Budget {
	b := v1.Budget{Nodes: nodes, Reasons: reasons}
	if schedule != "" {
		b.Schedule = &schedule
		b.Duration = &metav1.Duration{Duration: duration}
	}
	return b
}

func nodePoolWithBudgets(budgets ...v1.Budget) *v1.NodePool {
	np := &v1.NodePool{}
	np.Spec.Disruption.Budgets = budgets
	return np
}

// 2026-03-02 is a Monday.
var monday0930 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

func TestBudgetNodeCounts(t *testing.T) {
	for _, tc := range []struct {
		nodes string
		total int
		want  int
	}{
		{"10%", 15, 2}, // 1.5 rounds up
		{"5%", 10, 1},  // 0.5 rounds up
		{"10%", 10, 1},
		{"0%", 100, 0},
		{"100%", 7, 7},
		{"10%", 0, 0},
		{"3", 100, 3},
		{"0", 100, 0},
		{"50", 10, 50}, // a count is not capped by the pool size
	} {
		got := nodePoolWithBudgets(budget(tc.nodes, "", 0)).AllowedDisruptions(monday0930, tc.total, v1.DisruptionReasonEmpty)
		if got != tc.want {
			t.Errorf("nodes %s of %d: allowed %d, want %d", tc.nodes, tc.total, got, tc.want)
		}
	}
}

func TestBudgetSchedules(t *testing.T) {
	businessHours := budget("0", "0 9 * * mon-fri", 8*time.Hour)
	for _, tc := range []struct {
		name   string
		budget v1.Budget
		now    time.Time
		active bool
	}{
		{"at the scheduled time", businessHours, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), true},
		{"inside the window", businessHours, monday0930, true},
		{"just before the window closes", businessHours, time.Date(2026, 3, 2, 16, 59, 59, 0, time.UTC), true},
		{"when the window closes", businessHours, time.Date(2026, 3, 2, 17, 0, 0, 0, time.UTC), false},
		{"before the window opens", businessHours, time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC), false},
		{"on a Sunday", businessHours, time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), false},
		{"in another time zone", businessHours, time.Date(2026, 3, 2, 10, 30, 0, 0, time.FixedZone("CET", 3600)), true},
		{"a macro", budget("0", "@daily", 10*time.Minute), time.Date(2026, 3, 2, 0, 5, 0, 0, time.UTC), true},
		{"a macro, later", budget("0", "@daily", 10*time.Minute), time.Date(2026, 3, 2, 0, 15, 0, 0, time.UTC), false},
		{"a window spanning midnight", budget("0", "0 22 * * *", 4*time.Hour), time.Date(2026, 3, 3, 1, 0, 0, 0, time.UTC), true},
		{"no schedule", budget("0", "", 0), monday0930, true},
	} {
		active, err := tc.budget.IsActive(tc.now)
		if err != nil || active != tc.active {
			t.Errorf("%s: active %v, %v; want %v", tc.name, active, err, tc.active)
		}
	}
}

func TestAllowedDisruptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		budgets []v1.Budget
		reason  v1.DisruptionReason
		want    int
	}{
		{"no budgets", nil, v1.DisruptionReasonDrifted, v1.UnlimitedDisruptions},
		{"the most restrictive wins", []v1.Budget{budget("50%", "", 0), budget("3", "", 0), budget("10%", "", 0)}, v1.DisruptionReasonDrifted, 2},
		{"an inactive budget does not restrict", []v1.Budget{budget("20%", "", 0), budget("0", "0 22 * * *", time.Hour)}, v1.DisruptionReasonEmpty, 4},
		{"an active scheduled budget restricts", []v1.Budget{budget("20%", "", 0), budget("0", "0 9 * * mon-fri", 8*time.Hour)}, v1.DisruptionReasonEmpty, 0},
		{"only inactive budgets", []v1.Budget{budget("0", "0 22 * * *", time.Hour)}, v1.DisruptionReasonEmpty, v1.UnlimitedDisruptions},
		{"a budget for other reasons does not restrict", []v1.Budget{budget("0", "", 0, v1.DisruptionReasonUnderutilized), budget("5", "", 0)}, v1.DisruptionReasonDrifted, 5},
		{"a budget for this reason restricts", []v1.Budget{budget("0", "", 0, v1.DisruptionReasonUnderutilized, v1.DisruptionReasonDrifted), budget("5", "", 0)}, v1.DisruptionReasonDrifted, 0},
		{"an unparsable schedule allows nothing", []v1.Budget{budget("10", "not a cron", time.Hour)}, v1.DisruptionReasonEmpty, 0},
		{"an unparsable node count allows nothing", []v1.Budget{budget("ten", "", 0)}, v1.DisruptionReasonEmpty, 0},
	} {
		got := nodePoolWithBudgets(tc.budgets...).AllowedDisruptions(monday0930, 20, tc.reason)
		if got != tc.want {
			t.Errorf("%s: allowed %d, want %d", tc.name, got, tc.want)
		}
	}
}
