package manifest_test

import (
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tenon-sh/tenon/pkg/manifest"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// FuzzLoad reads arbitrary bytes as one YAML file. Whatever the input, Parse returns a Set or
// an ErrorList whose errors name the file, and a Set expands without panicking.
func FuzzLoad(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("---\n--- {kind: List, apiVersion: v1, items: [7, {kind: Pod}]}\n...\n"))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {generateName: a-}\nspec: {containers: [{name: a, image: a, resources: {limits: {cpu: 1e400}}}]}\n"))
	// Extreme quantities: beyond int64 as units, as millicores, and only once summed.
	for _, q := range []string{`cpu: "99999999999999999999999"`, "cpu: 1e16, memory: 1e30", "memory: 6Ei", "memory: 8Ei", "cpu: 9223372036854775807", "example.com/dev: 1e19"} {
		f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  overhead: {" + q + "}\n  initContainers: [{name: i, image: a, resources: {requests: {" + q + "}}}]\n" +
			"  containers: [{name: a, image: a, resources: {requests: {" + q + "}}}, {name: b, image: a, resources: {requests: {" + q + "}}}]\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := manifest.Parse("fuzz.yaml", data)
		if err != nil {
			var list manifest.ErrorList
			if set != nil || !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse returned %v and %T %v", set, err, err)
			}
			for _, e := range list {
				if e.File != "fuzz.yaml" || !strings.HasPrefix(e.Error(), "fuzz.yaml") {
					t.Fatalf("error does not name the file: %v", e)
				}
			}
			return
		}
		if set.PodCount() <= 1000 {
			if pods := set.Pods(); len(pods) != set.PodCount() {
				t.Fatalf("%d pods, PodCount %d", len(pods), set.PodCount())
			}
		}
		for _, ds := range set.DaemonSets {
			checkRequests(t, set.DaemonSetPod(ds))
		}
		if set.PodCount() <= 1000 {
			for _, p := range set.Pods() {
				checkRequests(t, p)
			}
		}
	})
}

// checkRequests fails when a loaded pod's requests convert to a negative amount: a quantity
// or a sum too large for an int64 must saturate, not wrap.
func checkRequests(t *testing.T, p *corev1.Pod) {
	t.Helper()
	r, err := scheduling.PodRequests(p)
	if err != nil {
		return // one extended resource too many, say: an error is an answer
	}
	for i, v := range r {
		if v < 0 {
			t.Fatalf("pod %s: %s converts to %d", p.Name, scheduling.ResourceNameAt(i), v)
		}
	}
}

// FuzzLoadQuantities loads pods whose requests, limits and overhead are drawn from the whole
// range a quantity can spell (mantissas up to 2^64, exponents and binary suffixes far past
// int64, milli-units), in two containers, an init container and the pod overhead. Loading
// accepts them or says why; the requests of every pod it accepts convert without wrapping, and
// saturate exactly when the exact total is beyond what an int64 counts.
func FuzzLoadQuantities(f *testing.F) {
	f.Add(uint64(99999999999999), uint8(9), uint8(0), uint64(6), uint8(0), uint8(6))
	f.Add(uint64(1), uint8(16), uint8(1), uint64(1), uint8(30), uint8(0))
	f.Add(uint64(1<<63), uint8(0), uint8(2), uint64(3), uint8(0), uint8(5))
	f.Fuzz(func(t *testing.T, m1 uint64, e1, s1 uint8, m2 uint64, e2, s2 uint8) {
		cpu, mem := spell(m1, e1, s1), spell(m2, e2, s2)
		doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n" +
			"  overhead: {cpu: \"" + cpu + "\", memory: \"" + mem + "\"}\n" +
			"  initContainers: [{name: i, image: a, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n" +
			"  containers:\n" +
			"  - {name: a, image: a, resources: {requests: {cpu: \"" + cpu + "\", memory: \"" + mem + "\"}}}\n" +
			"  - {name: b, image: a, resources: {requests: {memory: \"" + mem + "\"}, limits: {example.com/dev: \"" + mem + "\"}}}\n"
		set, err := manifest.Parse("q.yaml", []byte(doc))
		if err != nil {
			return
		}
		for _, p := range set.Pods() {
			checkRequests(t, p)
			r, err := scheduling.PodRequests(p)
			if err != nil {
				continue
			}
			// Memory: two containers plus the overhead, exactly; beyond int64 it saturates.
			q := resource.MustParse(mem)
			total := new(big.Int).Mul(big.NewInt(3), ceilUnits(q, 0))
			want := scheduling.Saturated
			if total.Cmp(big.NewInt(math.MaxInt64)) < 0 {
				want = total.Int64()
			}
			if r[scheduling.Memory] != want {
				t.Fatalf("memory %s ×3 converts to %d, want %d", mem, r[scheduling.Memory], want)
			}
		}
	})
}

var suffixes = []string{"", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}

// spell writes a quantity from a mantissa, an exponent (used when the suffix byte picks none)
// and a suffix.
func spell(m uint64, e, s uint8) string {
	suf := suffixes[int(s)%(len(suffixes)+1)%len(suffixes)]
	if int(s)%(len(suffixes)+1) == len(suffixes) {
		return strconv.FormatUint(m, 10) + "e" + strconv.Itoa(int(e%40))
	}
	return strconv.FormatUint(m, 10) + suf
}

// ceilUnits is ⌈q × 10^-scale⌉ exactly, in big integers.
func ceilUnits(q resource.Quantity, scale int) *big.Int {
	dec := q.AsDec()
	unscaled, exp := dec.UnscaledBig(), -int(dec.Scale())-scale // q = unscaled × 10^exp
	ten := big.NewInt(10)
	if exp >= 0 {
		return new(big.Int).Mul(unscaled, new(big.Int).Exp(ten, big.NewInt(int64(exp)), nil))
	}
	d := new(big.Int).Exp(ten, big.NewInt(int64(-exp)), nil)
	quo, rem := new(big.Int).QuoRem(unscaled, d, new(big.Int))
	if rem.Sign() > 0 {
		quo.Add(quo, big.NewInt(1))
	}
	return quo
}
