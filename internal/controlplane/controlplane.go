package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// defaultStartTimeout bounds Start when its context has no deadline.
const defaultStartTimeout = 2 * time.Minute

// ControlPlane is a running control plane on 127.0.0.1. Its methods are safe for concurrent
// use.
type ControlPlane struct {
	opts        Options
	binDir      string
	workDir     string
	ownsWorkDir bool
	files       pkiFiles
	pki         *pki

	plainClient   *http.Client // etcd, kwok (plain HTTP)
	adminClient   *http.Client // kube-apiserver: trusts the CA, presents the admin certificate
	servingClient *http.Client // kube-scheduler, kube-controller-manager: trusts the CA

	apiURL     string
	etcdPort   int // for RestartAPIServer
	kubeconfig string
	cfg        *rest.Config

	mu    sync.Mutex
	procs []*process // in start order

	failOnce sync.Once
	failed   chan struct{}
	failErr  error

	stopOnce sync.Once
	stopErr  error
}

// Start runs etcd and kube-apiserver, and the components opts asks for, on free ports of
// 127.0.0.1, and returns once every one is ready: etcd and kube-apiserver answer /readyz,
// kube-scheduler /readyz, kube-controller-manager /healthz, kwok /healthz (its controllers have
// started), and every CRD in opts is Established and served. kube-scheduler,
// kube-controller-manager, kwok and the CRDs are brought up concurrently once kube-apiserver
// is ready.
//
// ctx bounds Start only (two minutes when it has no deadline); the control plane keeps running
// until Stop. On failure Start stops whatever it started, removes a temporary WorkDir, and
// returns an error that quotes the tail of the failing component's log; when binaries are
// missing the error wraps ErrBinariesMissing and says to run hack/build-controlplane.sh.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	c, stages, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx, stages); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// prepare resolves the binaries, creates the work directory, and writes the credentials.
func prepare(opts Options) (*ControlPlane, string, error) {
	binDir := opts.BinDir
	if binDir == "" {
		d, err := defaultBinDir()
		if err != nil {
			return nil, "", err
		}
		binDir = d
	}
	need := []string{etcdBin, apiserverBin}
	if opts.Scheduler {
		need = append(need, schedulerBin)
	}
	if opts.ControllerManager {
		need = append(need, controllerManagerBin)
	}
	var stages string
	if opts.Kwok {
		need = append(need, kwokBin)
		stages = opts.KwokConfig
	}
	if err := checkBinaries(binDir, need); err != nil {
		return nil, "", err
	}
	if opts.Kwok && stages == "" {
		p, err := kwokStagesPath(binDir)
		if err != nil {
			return nil, "", err
		}
		stages = p
	}

	c := &ControlPlane{opts: opts, binDir: binDir, workDir: opts.WorkDir, failed: make(chan struct{})}
	if c.workDir == "" {
		d, err := os.MkdirTemp("", "tenon-controlplane-")
		if err != nil {
			return nil, "", err
		}
		c.workDir, c.ownsWorkDir = d, true
	}
	// It holds etcd's data and the cluster's private keys: for this user only, whatever the
	// umask or the mode of a directory the caller gave.
	if err := os.MkdirAll(c.workDir, 0o700); err != nil {
		return nil, "", err
	}
	if err := os.Chmod(c.workDir, 0o700); err != nil {
		_ = c.Stop()
		return nil, "", err
	}
	if err := c.writeCredentials(); err != nil {
		_ = c.Stop()
		return nil, "", err
	}
	return c, stages, nil
}

func (c *ControlPlane) writeCredentials() error {
	if err := os.MkdirAll(filepath.Join(c.workDir, "logs"), 0o700); err != nil {
		return err
	}
	p, err := newPKI()
	if err != nil {
		return err
	}
	c.pki = p
	if c.files, err = p.write(filepath.Join(c.workDir, "pki")); err != nil {
		return err
	}
	if c.plainClient, err = httpClient(nil, nil); err != nil {
		return err
	}
	admin := p.clients["admin"]
	if c.adminClient, err = httpClient(p.ca.cert, &admin); err != nil {
		return err
	}
	c.servingClient, err = httpClient(p.ca.cert, nil)
	return err
}

func (c *ControlPlane) start(ctx context.Context, stages string) error {
	_, etcdPort, err := c.launch(ctx, c.etcdSpec())
	if err != nil {
		return err
	}
	c.etcdPort = etcdPort
	_, apiPort, err := c.launch(ctx, c.apiserverSpec(etcdPort))
	if err != nil {
		return err
	}
	c.apiURL = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	c.cfg = restConfig(c.apiURL, c.pki.ca.cert, c.pki.clients["admin"])
	c.kubeconfig = filepath.Join(c.workDir, "kubeconfig")
	if err := writeKubeconfig(c.kubeconfig, c.apiURL, c.pki.ca.cert, c.pki.clients["admin"]); err != nil {
		return err
	}
	for _, name := range []string{Scheduler, ControllerManager, Kwok} {
		if err := writeKubeconfig(c.componentKubeconfig(name), c.apiURL, c.pki.ca.cert, c.pki.clients[name]); err != nil {
			return err
		}
	}

	var specs []spec
	if c.opts.Scheduler {
		specs = append(specs, c.schedulerSpec())
	}
	if c.opts.ControllerManager {
		specs = append(specs, c.controllerManagerSpec())
	}
	if c.opts.Kwok {
		specs = append(specs, c.kwokSpec(stages))
	}
	// The rest only need kube-apiserver: bring them up together, and give up on all as soon
	// as one fails (its error, not the others' cancellation, is the one reported).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		if err != nil {
			errOnce.Do(func() { firstErr = err; cancel() })
		}
	}
	for _, s := range specs {
		wg.Go(func() { _, _, err := c.launch(ctx, s); fail(err) })
	}
	wg.Go(func() { fail(InstallCRDs(ctx, c.RESTConfig(), c.opts.CRDs)) })
	wg.Wait()
	return firstErr
}

// track records p so Stop stops it.
func (c *ControlPlane) track(p *process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.procs = append(c.procs, p)
}

// onExit reports a component that exits without being stopped.
func (c *ControlPlane) onExit(p *process) {
	if p.stopping.Load() {
		return
	}
	c.failOnce.Do(func() {
		c.failErr = fmt.Errorf("%s exited unexpectedly (%v)%s", p.name, p.waitErr, p.logTail(30))
		close(c.failed)
	})
}

func (c *ControlPlane) logPath(name string) string {
	return filepath.Join(c.workDir, "logs", name+".log")
}

func (c *ControlPlane) componentKubeconfig(name string) string {
	return filepath.Join(c.workDir, name+".kubeconfig")
}

// RESTConfig returns a new copy of the admin client configuration (user tenon-admin, group
// system:masters; 200 QPS, burst 400). Callers may modify it.
func (c *ControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(c.cfg) }

// KubeconfigPath returns the admin kubeconfig file (certificates embedded, context "tenon",
// namespace "default"), usable with kubectl --kubeconfig. It is in WorkDir.
func (c *ControlPlane) KubeconfigPath() string { return c.kubeconfig }

// APIServerURL returns kube-apiserver's address, https://127.0.0.1:<port>.
func (c *ControlPlane) APIServerURL() string { return c.apiURL }

// CACert returns the PEM certificate of the authority that signed every serving and client
// certificate of this control plane.
func (c *ControlPlane) CACert() []byte { return append([]byte(nil), c.pki.ca.cert...) }

// WorkDir returns the directory holding etcd's data, credentials, kubeconfigs and logs
// (logs/<component>.log).
func (c *ControlPlane) WorkDir() string { return c.workDir }

// Done is closed when a component exits without Stop having been called; Err then says which
// and why. A control plane whose component died is not repaired: Stop it.
func (c *ControlPlane) Done() <-chan struct{} { return c.failed }

// Err returns nil while every component runs, and after Done is closed the error describing
// the first component that exited, with the tail of its log.
func (c *ControlPlane) Err() error {
	select {
	case <-c.failed:
		return c.failErr
	default:
		return nil
	}
}

// LogTails returns the last n lines of every component's log, one section per component, for
// diagnosing a failed test. Call it before Stop when Stop removes WorkDir.
func (c *ControlPlane) LogTails(n int) string {
	var out string
	for _, name := range []string{Etcd, APIServer, Scheduler, ControllerManager, Kwok} {
		if t := tailFile(c.logPath(name), n); t != "" {
			out += fmt.Sprintf("==== %s (%s)\n%s\n", name, c.logPath(name), t)
		}
	}
	return out
}

// Stop stops every component and waits until each has exited, so none survives it; then it
// removes WorkDir if Start created it. With a temporary WorkDir, whose state is discarded
// anyway, every process group is sent SIGKILL at once (Stop takes milliseconds). With a given
// WorkDir the shutdown is graceful: kwok, kube-scheduler and kube-controller-manager first,
// then kube-apiserver, then etcd, each sent SIGTERM and given five seconds before SIGKILL
// (kube-apiserver takes about a second). Stop is idempotent: later calls return the first
// call's result.
func (c *ControlPlane) Stop() error {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		procs := append([]*process(nil), c.procs...)
		c.mu.Unlock()
		for _, p := range procs {
			p.stopping.Store(true)
		}
		byName := map[string][]*process{}
		for _, p := range procs {
			byName[p.name] = append(byName[p.name], p)
		}
		grace := stopGrace
		if c.ownsWorkDir {
			grace = 0
		}
		stopAll := func(names ...string) {
			var wg sync.WaitGroup
			for _, n := range names {
				for _, p := range byName[n] {
					wg.Go(func() { p.stop(grace) })
				}
			}
			wg.Wait()
		}
		if grace == 0 {
			stopAll(Kwok, Scheduler, ControllerManager, APIServer, Etcd)
		} else {
			stopAll(Kwok, Scheduler, ControllerManager)
			stopAll(APIServer)
			stopAll(Etcd)
		}
		if c.ownsWorkDir {
			c.stopErr = os.RemoveAll(c.workDir)
		}
	})
	return c.stopErr
}
