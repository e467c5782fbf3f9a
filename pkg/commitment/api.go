package commitment

import (
	"fmt"
	"strconv"

	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
)

// FromAPI converts a Commitment object. vcpu gives an instance type's vCPUs (for the units of a
// metal reservation; it may return 0 for types it does not know). The error names the field
// that does not parse.
func FromAPI(o *tenonv1alpha1.Commitment, vcpu func(instanceType string) int64) (Commitment, error) {
	c := Commitment{Name: o.Name}
	if o.Spec.Start != nil {
		c.Start = o.Spec.Start.Time
	}
	if o.Spec.End != nil {
		c.End = o.Spec.End.Time
	}
	var err error
	dec := func(field, s string, percent bool) float64 {
		if err != nil {
			return 0
		}
		v, perr := strconv.ParseFloat(s, 64)
		switch {
		case perr != nil || v < 0:
			err = fmt.Errorf("commitment %s: %s %q is not a non-negative decimal", o.Name, field, s)
		case percent && v > 100:
			err = fmt.Errorf("commitment %s: %s %q is more than 100 percent", o.Name, field, s)
		case percent:
			v /= 100
		}
		return v
	}
	set := 0
	if sp := o.Spec.ComputeSavingsPlan; sp != nil {
		set++
		c.Kind = ComputeSavingsPlan
		c.Hourly = dec("spec.computeSavingsPlan.hourlyCommitment", sp.HourlyCommitment, false)
		c.Default = dec("spec.computeSavingsPlan.defaultDiscount", sp.DefaultDiscount, true)
		for i, d := range sp.Discounts {
			c.Rates = append(c.Rates, Rate{Family: d.Family, Region: d.Region,
				Discount: dec(fmt.Sprintf("spec.computeSavingsPlan.discounts[%d].percent", i), d.Percent, true)})
		}
	}
	if sp := o.Spec.EC2InstanceSavingsPlan; sp != nil {
		set++
		c.Kind = InstanceSavingsPlan
		c.Hourly = dec("spec.ec2InstanceSavingsPlan.hourlyCommitment", sp.HourlyCommitment, false)
		c.Default = dec("spec.ec2InstanceSavingsPlan.discount", sp.Discount, true)
		c.Family, c.Region = sp.Family, sp.Region
	}
	if ri := o.Spec.ReservedInstances; ri != nil {
		set++
		c.Kind = ZonalReservation
		if ri.Zone == "" {
			c.Kind = RegionalReservation
		}
		c.InstanceType, c.Zone, c.Region, c.Count = ri.InstanceType, ri.Zone, ri.Region, int(ri.Count)
		if ri.EffectiveHourlyPrice != "" {
			c.Fee = dec("spec.reservedInstances.effectiveHourlyPrice", ri.EffectiveHourlyPrice, false)
		}
		var n int64
		if vcpu != nil {
			n = vcpu(ri.InstanceType)
		}
		c.Units = Units(ri.InstanceType, n)
		if err == nil && c.Kind == RegionalReservation && c.Units == 0 {
			err = fmt.Errorf("commitment %s: spec.reservedInstances.instanceType %q has no normalization factor: a regional reservation needs a size such as large or 2xlarge", o.Name, ri.InstanceType)
		}
		if err == nil && c.Count < 1 {
			err = fmt.Errorf("commitment %s: spec.reservedInstances.count %d is not positive", o.Name, c.Count)
		}
	}
	if err == nil && set != 1 {
		err = fmt.Errorf("commitment %s: exactly one of spec.computeSavingsPlan, spec.ec2InstanceSavingsPlan and spec.reservedInstances must be set, not %d", o.Name, set)
	}
	if err == nil && !c.Start.IsZero() && !c.End.IsZero() && !c.End.After(c.Start) {
		err = fmt.Errorf("commitment %s: spec.end is not after spec.start", o.Name)
	}
	return c, err
}
