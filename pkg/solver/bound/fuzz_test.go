package bound

import (
	"math"
	"reflect"
	"testing"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// byteChooser draws integers from fuzzer bytes, then zeros once they run out.
type byteChooser struct{ data []byte }

func (c *byteChooser) Int(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	var b int
	if len(c.data) > 0 {
		b, c.data = int(c.data[0]), c.data[1:]
	}
	return lo + b%(hi-lo+1)
}

// FuzzLower builds small problems from arbitrary bytes: Lower must not panic, must return no
// NaN, must be deterministic, and must never exceed the brute-force optimum.
func FuzzLower(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 7, 7, 5, 3, 1, 0, 200, 1, 0, 2, 9, 2, 1, 3, 0, 255, 4, 4, 1})
	f.Add([]byte{0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 16, 8, 0, 0, 1, 1, 0})
	f.Add([]byte("tenon bounds the cost of packing pods onto nodes"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := smallProblem(&byteChooser{data: data})
		r := Lower(p)
		if again := Lower(p); !reflect.DeepEqual(again, r) {
			t.Fatalf("not deterministic: %+v then %+v", r, again)
		}
		for _, v := range []float64{r.Value, r.Covering, r.Configuration, r.Trivial} {
			if math.IsNaN(v) {
				t.Fatalf("NaN in %+v", r)
			}
		}
		checkAgainstBruteForce(t, p, r)
	})
}

// FuzzLowerOverheads is FuzzLower on problems whose types lose a drawn DaemonSet overhead, as
// the solver's and the simulator's types do: often more than the type has, leaving it negative
// room in some slot, sometimes a saturated amount; and demands that are sometimes saturated
// too. Lower must not panic, must be deterministic, never NaN, never above the brute-force
// optimum, and +Inf exactly when some class fits no type it may use.
func FuzzLowerOverheads(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	f.Add([]byte("a daemonset larger than the node it runs on"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &byteChooser{data: data}
		p := smallProblem(c)
		slots := []int{scheduling.CPU, scheduling.Memory, scheduling.Pods, scheduling.NvidiaGPU}
		for i := range p.Types {
			capa := &p.Types[i].Capacity
			for _, r := range slots {
				switch c.Int(0, 5) {
				case 0: // more than the type has
					capa[r] = scheduling.SatSub(capa[r], capa[r]+int64(c.Int(1, 3000)))
				case 1: // all of it
					capa[r] = 0
				case 2:
					capa[r] = scheduling.SatSub(capa[r], scheduling.Saturated)
				case 3: // a type that reports more than int64 can count
					capa[r] = scheduling.Saturated
				}
			}
		}
		for k := range p.Classes {
			if c.Int(0, 4) == 4 {
				p.Classes[k].Demand[slots[c.Int(0, len(slots)-1)]] = scheduling.Saturated
			}
		}
		r := Lower(p)
		if again := Lower(p); !reflect.DeepEqual(again, r) {
			t.Fatalf("not deterministic: %+v then %+v", r, again)
		}
		opt := checkAgainstBruteForce(t, p, r)
		// The counting bounds alone (the joint cover among them) on the same extreme amounts.
		if c := Lower(p, CountingOnly()); math.IsNaN(c.Value) || c.Value < 0 || c.Value > opt+1e-9 {
			t.Fatalf("CountingOnly = %v, optimum %v\n%s", c.Value, opt, describe(p))
		}
	})
}
