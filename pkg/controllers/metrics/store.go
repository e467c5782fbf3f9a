package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// gaugeSet sets a whole gauge vector at once: the series set in one round replace those of the
// last round, and a series not set again is deleted (an object that went away leaves no stale
// series). Not safe for concurrent use; the controller's loop is its only user.
type gaugeSet struct {
	vec  *prometheus.GaugeVec
	last map[string]prometheus.Labels
	next map[string]prometheus.Labels
}

func newGaugeSet(vec *prometheus.GaugeVec) *gaugeSet {
	return &gaugeSet{vec: vec, last: map[string]prometheus.Labels{}, next: map[string]prometheus.Labels{}}
}

// set sets one series of this round.
func (g *gaugeSet) set(l prometheus.Labels, v float64) {
	g.vec.With(l).Set(v)
	g.next[labelKey(l)] = l
}

// flush ends the round: the series of the last round not set in this one are deleted.
func (g *gaugeSet) flush() {
	for k, l := range g.last {
		if _, ok := g.next[k]; !ok {
			g.vec.Delete(l)
		}
	}
	g.last, g.next = g.next, map[string]prometheus.Labels{}
}

// labelKey identifies a label set; the label names of one vector are always the same, so the
// values in name order are enough.
func labelKey(l prometheus.Labels) string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sortStrings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(l[n])
		b.WriteByte(0)
	}
	return b.String()
}
