package catalog

import (
	"fmt"
	"math"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// PriceOverride replaces or adjusts the price of the on-demand and spot offerings it matches,
// for negotiated discounts or for what-if studies. Reserved offerings are never matched: their
// price follows the (overridden) on-demand price of their zone, so that they stay preferred.
type PriceOverride struct {
	// Match selects offerings by the labels a node bought through them would carry: the type's
	// own labels plus zone, zone ID and capacity type. A label the node would not carry is
	// absent. Empty Match selects every offering.
	Match scheduling.Requirements
	// Fixed sets the price to Value (USD per hour). Otherwise Value is a change in percent:
	// +20 makes the offering 20% dearer, −10 10% cheaper.
	Fixed bool
	Value float64
}

// FixedPrice sets the price of the matching offerings to price (USD per hour).
func FixedPrice(match scheduling.Requirements, price float64) PriceOverride {
	return PriceOverride{Match: match, Fixed: true, Value: price}
}

// AdjustPrice changes the price of the matching offerings by percent (+20: 20% dearer).
func AdjustPrice(match scheduling.Requirements, percent float64) PriceOverride {
	return PriceOverride{Match: match, Value: percent}
}

func (p PriceOverride) validate() error {
	if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
		return fmt.Errorf("price override %s: value %g is not finite", p.Match, p.Value)
	}
	if p.Fixed && p.Value < 0 {
		return fmt.Errorf("price override %s: negative price %g", p.Match, p.Value)
	}
	if !p.Fixed && p.Value < -100 {
		return fmt.Errorf("price override %s: %g%% would make prices negative", p.Match, p.Value)
	}
	return nil
}

// matches reports whether a node of a type with typeLabels bought through o satisfies p.Match.
func (p PriceOverride) matches(typeLabels map[string]string, o *Offering) bool {
	for _, r := range p.Match.Items() {
		v, present, decides := o.Label(r.Key)
		if !decides {
			v, present = typeLabels[r.Key]
		}
		if !r.Matches(v, present) {
			return false
		}
	}
	return true
}

func (p PriceOverride) apply(price float64) float64 {
	if p.Fixed {
		return p.Value
	}
	return price * (1 + p.Value/100)
}

// applyOverrides applies every override, in order, to the offerings (reserved ones excepted).
func applyOverrides(overrides []PriceOverride, typeLabels map[string]string, offerings []Offering) {
	for _, p := range overrides {
		for i := range offerings {
			o := &offerings[i]
			if o.ReservationID == "" && p.matches(typeLabels, o) {
				o.Price = p.apply(o.Price)
			}
		}
	}
}
