package solver

import "fmt"

// PreferencePolicy says how a solve treats preferences: preferred node affinity, preferred pod
// affinity and anti-affinity, and ScheduleAnyway topology spreads. The names and meanings are
// Karpenter's (--preference-policy).
type PreferencePolicy string

const (
	// PreferenceRespect (the default) enforces every preference as if it were required, and
	// drops one at a time only for the pods that cannot be placed with it.
	PreferenceRespect PreferencePolicy = "Respect"
	// PreferenceIgnore plans as if pods had no preferences: only their required constraints
	// count (kube-scheduler still weighs the preferences when it binds).
	PreferenceIgnore PreferencePolicy = "Ignore"
)

// ParsePreferencePolicy reads a policy name ("" is Respect).
func ParsePreferencePolicy(s string) (PreferencePolicy, error) {
	switch PreferencePolicy(s) {
	case "", PreferenceRespect:
		return PreferenceRespect, nil
	case PreferenceIgnore:
		return PreferenceIgnore, nil
	}
	return "", fmt.Errorf("invalid preference policy %q: want %s or %s", s, PreferenceRespect, PreferenceIgnore)
}

// String, Set and Type let a command line take the policy as a flag value.
func (p *PreferencePolicy) String() string {
	if *p == "" {
		return string(PreferenceRespect)
	}
	return string(*p)
}

func (p *PreferencePolicy) Set(s string) error {
	v, err := ParsePreferencePolicy(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func (p *PreferencePolicy) Type() string { return "policy" }

// dropPreferences turns off every preference the pods of a class declared, as relaxing would
// one by one: its preferred pod affinity and anti-affinity terms, its preferred node-affinity
// terms and its ScheduleAnyway spreads. The solver's own soft rules (the skews of groups the
// class is only counted by) stay.
func (s *solve) dropPreferences(c *class) {
	for {
		dropped := false
		for _, p := range s.preferences(c) {
			if p.order <= 3 {
				p.set(false)
				dropped = true
				break
			}
		}
		if !dropped {
			return
		}
	}
}
