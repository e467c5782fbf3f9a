package chaos

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

var (
	flagSeed  = flag.Int64("chaos.seed", 0, "seed of the random choices (0: drawn from the clock and printed)")
	flagPods  = flag.Int("chaos.pods", 60, "pods of the scale-up")
	flagKills = flag.Int("chaos.kills", 6, "SIGKILLs of the controller, split between the scale-up and the consolidation")
	flagFault = flag.Float64("chaos.fault-rate", 0.2, "fraction of the simulated cloud's launch calls that fail")
)

// tenonBin is the tenon binary TestMain builds from this tree.
var tenonBin string

func TestMain(m *testing.M) {
	flag.Parse()
	ctrl.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "tenon-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tenonBin = filepath.Join(dir, "tenon")
	build := exec.Command("go", "build", "-o", tenonBin, "github.com/tenon-sh/tenon/cmd/tenon")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building tenon: %v\n", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// seed returns the run's seed, printing it so that a failing run can be replayed.
func seed(t *testing.T) int64 {
	s := *flagSeed
	if s == 0 {
		s = time.Now().UnixNano() % 1_000_000_007
	}
	t.Logf("seed %d (replay: -chaos.seed=%d)", s, s)
	return s
}
