package chaos

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/internal/controlplane"
)

// controller is `tenon controller` run as a child process, started again after each kill.
type controller struct {
	t          *testing.T
	kubeconfig string
	extra      []string
	logPath    string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	metrics  string // host:port of the running process's metrics endpoint
	starts   int
	kills    int
	unclean  []string // exits nobody asked for
	stopping bool
}

func newController(t *testing.T, kubeconfig string, extra ...string) *controller {
	c := &controller{t: t, kubeconfig: kubeconfig, extra: extra, logPath: t.TempDir() + "/controller.log"}
	t.Cleanup(func() {
		c.mu.Lock()
		c.stopping = true
		c.mu.Unlock()
		c.kill()
		if t.Failed() {
			t.Logf("controller log tail:\n%s", tail(c.logPath, 60))
			// The whole log outlives the test's temporary directory.
			if data, err := os.ReadFile(c.logPath); err == nil {
				kept := filepath.Join(os.TempDir(), fmt.Sprintf("tenon-chaos-%s-%d.log", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().Unix()))
				if os.WriteFile(kept, data, 0o600) == nil {
					t.Logf("controller log kept at %s", kept)
				}
			}
		}
	})
	return c
}

// args are the controller's flags: short batch windows and disruption delays so that a run
// takes seconds, leader election off (a SIGKILLed leader's lease would hold its restarted
// successor back for up to a lease duration; TestLeaderHandOver turns it on through extra),
// metrics on a free port. Flags in extra come later and win.
func (c *controller) args(metrics string) []string {
	return append([]string{"controller",
		"--kubeconfig=" + c.kubeconfig,
		"--leader-elect=false",
		"--metrics-bind-address=" + metrics,
		"--health-probe-bind-address=0",
		"--batch-idle-duration=300ms",
		"--batch-max-duration=3s",
		"--disruption-pass-interval=2s",
		"--disruption-validation-delay=2s",
		"--disruption-failure-backoff=10s",
		"--disruption-orphan-taint-interval=10s",
		"--consolidation-repack-after=10s",
		"--log-format=console",
	}, c.extra...)
}

// start runs a new controller process.
func (c *controller) start() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		c.t.Fatal("controller started twice")
	}
	port, err := controlplane.FreePort()
	if err != nil {
		c.t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	log, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	c.starts++
	fmt.Fprintf(log, "==== start %d at %s\n", c.starts, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(tenonBin, c.args(addr)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	c.cmd, c.done, c.metrics = cmd, done, addr
	go func() {
		err := cmd.Wait()
		_ = log.Close()
		c.mu.Lock()
		if c.cmd == cmd && !c.stopping {
			c.unclean = append(c.unclean, fmt.Sprintf("start %d exited by itself: %v", c.starts, err))
			c.cmd = nil
		}
		c.mu.Unlock()
		close(done)
	}()
}

// kill sends SIGKILL to the running process and waits for it to exit.
func (c *controller) kill() {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.cmd = nil
	if cmd != nil {
		c.kills++
	}
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// crashed returns the exits nobody asked for.
func (c *controller) crashed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.unclean...)
}

// metric returns the sum of a metric's samples whose labels contain every one of match
// (`name="value"`), scraped from the running process; it is an error if there is none, so that
// a renamed metric cannot make a check vacuous.
func (c *controller) metric(name string, match ...string) (float64, error) {
	c.mu.Lock()
	addr := c.metrics
	c.mu.Unlock()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return sumMetric(resp.Body, name, match...)
}

func sumMetric(r io.Reader, name string, match ...string) (float64, error) {
	var sum float64
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
outer:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != '{' && line[len(name)] != ' ') {
			continue
		}
		for _, m := range match {
			if !strings.Contains(line, m) {
				continue outer
			}
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%w of %s %v", errNoSample, name, match)
	}
	return sum, nil
}

// errNoSample is what sumMetric returns when the scrape holds no sample of the metric: a
// counter vector shows none until a first label set is counted.
var errNoSample = errors.New("no sample")

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
