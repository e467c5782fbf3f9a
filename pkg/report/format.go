package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-sh/tenon/pkg/sim"
)

// dollars formats an amount with thousands separators: $288,303.
func dollars(v float64) string {
	if v < 100 {
		return fmt.Sprintf("$%.2f", v)
	}
	return "$" + thousands(int64(math.Round(v)))
}

// thousands formats an integer with commas.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// seconds formats a duration given in seconds, compactly: 45s, 12m, 3.5h.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.0fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%.1fm", d.Minutes())
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1fh", d.Hours())
	}
	return fmt.Sprintf("%.1fd", d.Hours()/24)
}

func pct(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

// ratio formats cost ÷ bound.
func ratio(cost, bound float64) string {
	if bound <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f×", cost/bound)
}

// span formats hours as days when long.
func span(hours float64) string {
	if hours >= 48 {
		return fmt.Sprintf("%.1f days", hours/24)
	}
	return fmt.Sprintf("%.1f hours", hours)
}

// reasons formats disrupted-node counts by reason: "Empty 12, Underutilized 40".
func reasons(p *sim.PolicyResult) string {
	var parts []string
	for _, r := range p.Reasons() {
		parts = append(parts, fmt.Sprintf("%s %s", r, thousands(int64(p.NodesDisrupted[r]))))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// perDollar formats evictions per dollar saved.
func perDollar(p *sim.PolicyResult) string {
	if p.SavingsPerHour <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", p.EvictionsPerDollar)
}
