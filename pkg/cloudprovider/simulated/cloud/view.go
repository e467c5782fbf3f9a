package cloud

import (
	"fmt"
	"slices"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

// InstanceTypes returns the class's catalog as it stands at now: an offering is Available when
// it has room (see the package doc), and a reserved offering's ReservationCapacity is what its
// reservation has left. The result is shared and read-only: types whose offerings did not
// change since the last call are the same objects, and the slice itself is returned again
// when nothing changed, so the call is cheap enough for every provisioning batch.
func (c *Cloud) InstanceTypes(class string, now time.Time) ([]*catalog.InstanceType, error) {
	c.catchUp(now)
	cls, ok := c.classes[class]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownClass, class)
	}
	return cls.instanceTypes(now), nil
}

func (cls *class) instanceTypes(now time.Time) []*catalog.InstanceType {
	var out []*catalog.InstanceType
	var copied map[int]bool
	for _, d := range cls.dynamic {
		it := cls.cfg.Catalog.Types[d.t]
		base := &it.Offerings[d.o]
		available := cls.hasRoom(it, base, d.pools, now)
		left := base.ReservationCapacity
		if base.CapacityType == apisv1.CapacityTypeReserved {
			left = cls.reservationLeft(base.ReservationID)
		}
		cur := &cls.view[d.t].Offerings[d.o]
		if cur.Available == available && cur.ReservationCapacity == left {
			continue
		}
		if out == nil {
			out, copied = slices.Clone(cls.view), map[int]bool{}
		}
		if !copied[d.t] {
			cp := *out[d.t]
			cp.Offerings = slices.Clone(cp.Offerings)
			out[d.t], copied[d.t] = &cp, true
		}
		out[d.t].Offerings[d.o].Available = available
		out[d.t].Offerings[d.o].ReservationCapacity = left
	}
	if out != nil {
		cls.view = out
	}
	return cls.view
}
