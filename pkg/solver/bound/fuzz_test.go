package bound

import (
	"math"
	"reflect"
	"testing"
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
