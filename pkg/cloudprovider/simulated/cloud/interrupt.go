package cloud

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// bucketProbability is, per Spot Advisor bucket, the probability of an interruption within 30
// days that the model assumes: the middle of the bucket, and 25% for ">20%".
var bucketProbability = [...]float64{0.025, 0.075, 0.125, 0.175, 0.25}

// unknownBucket is the bucket assumed for types the advisor does not know.
const unknownBucket = 2

const month = 30 * 24 * time.Hour

// maxDraw bounds a drawn time; a later draw means no interruption within any simulation.
const maxDraw = 100 * 365 * 24 * time.Hour

// SpotInterruptionRate returns the hazard rate (interruptions per hour) of a spot instance of a
// type with the given advice, before scaling: −ln(1 − p) / 720h for the bucket's probability p.
func SpotInterruptionRate(a catalog.SpotAdvice) float64 {
	b := unknownBucket
	if a.Known && a.Bucket >= 0 && a.Bucket < len(bucketProbability) {
		b = a.Bucket
	}
	return -math.Log(1-bucketProbability[b]) / month.Hours()
}

// drawInterruption plans the interruption of a new instance: the earliest of its spot
// interruption (advisor model), its scheduled maintenance and the end of its capacity block.
// It also returns when the rebalance recommendation of a spot interruption is due.
func (cls *class) drawInterruption(inst *Instance) (Interruption, time.Time) {
	cfg := cls.cfg.Interruptions
	var best Interruption
	var rebalance time.Time
	consider := func(p Interruption) bool {
		if best.IsZero() || p.Deadline.Before(best.Deadline) {
			best = p
			return true
		}
		return false
	}
	if inst.Offering.CapacityType == apisv1.CapacityTypeSpot && cfg.Spot == SpotAdvisor && cfg.Scale > 0 {
		rate := SpotInterruptionRate(inst.Type.SpotAdvice) * cfg.Scale
		if d, ok := drawExp(cfg.Seed, inst.ID, "spot", rate); ok {
			notice := inst.Launched.Add(d)
			p := Interruption{Kind: cloudprovider.SpotInterruption, Reason: ReasonSpotInterruption, Notice: notice, Deadline: notice.Add(SpotNotice)}
			if consider(p) {
				rebalance = rebalanceBefore(notice, inst.Launched, cfg.RebalanceLead)
			}
		}
	}
	if cfg.MaintenanceInterval > 0 {
		if d, ok := drawExp(cfg.Seed, inst.ID, "maintenance", 1/cfg.MaintenanceInterval.Hours()); ok {
			notice := inst.Launched.Add(d)
			if consider(Interruption{Kind: cloudprovider.ScheduledMaintenance, Reason: ReasonScheduledMaintenance, Notice: notice, Deadline: notice.Add(cfg.MaintenanceNotice)}) {
				rebalance = time.Time{}
			}
		}
	}
	if r, ok := cls.reservations[inst.Offering.ReservationID]; ok && !r.Window.End.IsZero() {
		notice := r.Window.End.Add(-cfg.MaintenanceNotice)
		if notice.Before(inst.Launched) {
			notice = inst.Launched
		}
		if consider(Interruption{Kind: cloudprovider.ScheduledMaintenance, Reason: ReasonCapacityBlockExpired, Notice: notice, Deadline: r.Window.End}) {
			rebalance = time.Time{}
		}
	}
	return best, rebalance
}

// drawExp draws an exponential duration with the given rate per hour from a generator seeded by
// seed, the instance ID and the purpose, so that the draw depends on nothing else. It reports
// false when the draw is beyond maxDraw.
func drawExp(seed int64, id, purpose string, ratePerHour float64) (time.Duration, bool) {
	if ratePerHour <= 0 {
		return 0, false
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(purpose))
	r := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	hours := r.ExpFloat64() / ratePerHour
	if hours >= maxDraw.Hours() {
		return 0, false
	}
	return time.Duration(hours * float64(time.Hour)), true
}

// rebalanceBefore is when the rebalance recommendation of a spot notice at notice comes: lead
// before it, but not before launch.
func rebalanceBefore(notice, launched time.Time, lead time.Duration) time.Time {
	if r := notice.Add(-lead); r.After(launched) {
		return r
	}
	return launched
}
