package up

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/examples"
	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// Options configure Run.
type Options struct {
	// Files replace the demo workload (the example NodePools are applied unless NoNodePools).
	Files       []string
	NoNodePools bool
	// ExitAfter stops everything this long after the workload was applied (0: run until ctx ends).
	ExitAfter time.Duration
	// Out receives the live view; Interactive redraws it in place (a terminal).
	Out         io.Writer
	Interactive bool
	// Log receives the controller's logs.
	Log logr.Logger
	// Operator options (leader election is always off here). Operator.CloudProvider "aws" runs
	// the AWS provider against the project's EC2-compatible endpoint on loopback, with the
	// NodePools of examples/aws.
	Operator operator.Options

	nodePools string // the example NodePools applied (set by Run)
}

// Summary is what a run ended with.
type Summary struct {
	Pods, Running, Pending int
	Nodes, NodeClaims      int
	PricePerHour           float64
	Kubeconfig             string
}

// Run starts everything, applies the manifests, shows progress until ctx ends or ExitAfter, and
// stops everything.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	binDir, err := ensureBinaries(ctx, out)
	if err != nil {
		return nil, err
	}
	all, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	fmt.Fprintf(out, "Starting etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kwok on loopback...\n")
	cp, err := controlplane.Start(ctx, controlplane.Options{
		BinDir: binDir, Scheduler: true, ControllerManager: true, Kwok: true, CRDs: all,
	})
	if err != nil {
		return nil, err
	}
	// Stopped before anything is printed at the end: a reader of our output that went away
	// (a pipe closed by the same Ctrl-C) must not keep the control plane's directory (etcd's data
	// and the cluster's private keys) on disk.
	defer func() { _ = cp.Stop() }()
	fmt.Fprintf(out, "Control plane ready in %s at %s\n", time.Since(start).Round(100*time.Millisecond), cp.APIServerURL())
	fmt.Fprintf(out, "Kubeconfig: %s (kubectl is in %s)\n", cp.KubeconfigPath(), binDir)

	cloudName := "the simulated cloud"
	nodePools := "nodepools.yaml"
	var endpoint *awsapi.Server
	if opts.Operator.CloudProvider == aws.ProviderName {
		// The AWS provider, unchanged, against the project's EC2-compatible endpoint on
		// loopback; its kubelet registers a Node for each instance the endpoint runs.
		server, url, err := awsapi.Start(ctx, "127.0.0.1:0", awsapi.Options{
			Clock: clock.RealClock{}, Delays: cloud.Delays{Boot: 2 * time.Second, Registration: time.Second, DevicePlugin: 3 * time.Second},
		})
		if err != nil {
			return nil, err
		}
		setDefaultEnv("AWS_ACCESS_KEY_ID", "tenon-up")
		setDefaultEnv("AWS_SECRET_ACCESS_KEY", "tenon-up")
		a := &opts.Operator.AWS
		a.EndpointURL, a.Region = url, server.Region()
		if a.ClusterName == "" {
			a.ClusterName = "tenon"
		}
		kube, err := client.New(cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
		if err != nil {
			return nil, err
		}
		kubelet := &awsapi.Kubelet{Server: server, Client: kube}
		go func() { _ = kubelet.Start(ctx) }()
		cloudName = "the AWS provider, against the EC2-compatible endpoint at " + url
		nodePools = "aws/nodepools.yaml"
		endpoint = server
	}
	fmt.Fprintf(out, "Cloud: %s\n", cloudName)
	opts.nodePools = nodePools

	opts.Operator.LeaderElection = false
	if opts.Operator.MetricsAddr == "" {
		opts.Operator.MetricsAddr = "0"
	}
	if opts.Operator.HealthAddr == "" {
		opts.Operator.HealthAddr = "0"
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	op, err := operator.New(runCtx, cp.RESTConfig(), opts.Operator, opts.Log)
	if err != nil {
		return nil, err
	}
	opErr := make(chan error, 1)
	go func() { opErr <- op.Start(runCtx) }()

	kube, err := client.New(cp.RESTConfig(), client.Options{Scheme: operator.Scheme})
	if err != nil {
		return nil, err
	}
	// shutdown stops the controller (waiting a while for it) and then the control plane.
	shutdown := func() error {
		cancel()
		select {
		case <-opErr:
		case <-time.After(operatorStopWait):
		}
		return cp.Stop()
	}
	v := &view{kube: kube, out: out, interactive: opts.Interactive, kubeconfig: cp.KubeconfigPath(), binDir: binDir, cloud: cloudName, endpoint: endpoint}
	if err := applyAll(ctx, kube, opts); err != nil {
		if ctx.Err() == nil {
			return nil, err
		}
		// Ctrl-C while the manifests were being applied: a stop like any other.
		v.final(nil, shutdown())
		return nil, nil
	}
	v.start = time.Now()
	var deadline <-chan time.Time
	if opts.ExitAfter > 0 {
		t := time.NewTimer(opts.ExitAfter)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var sum *Summary
	var end error
	for done := false; !done; {
		s, err := v.refresh(ctx)
		if err == nil {
			sum = s
		}
		select {
		case <-ctx.Done():
			done = true
		case <-deadline:
			done = true
		case err := <-opErr:
			end, done = controllerEnded(ctx.Err(), err), true
			opErr <- err // for the wait below
		case <-cp.Done():
			return sum, fmt.Errorf("the control plane stopped: %w\n%s", cp.Err(), cp.LogTails(20))
		case <-tick.C:
		}
	}
	stopErr := shutdown()
	if end != nil {
		return sum, end
	}
	v.final(sum, stopErr)
	return sum, nil
}

// setDefaultEnv sets an environment variable unless it is set: the SDK's default chain then
// finds credentials for the local endpoint, which accepts any.
func setDefaultEnv(name, value string) {
	if _, ok := os.LookupEnv(name); !ok {
		_ = os.Setenv(name, value)
	}
}

// operatorStopWait bounds the wait for the controller to stop before the control plane is.
const operatorStopWait = 10 * time.Second

// controllerEnded is the error of a run whose controller returned err: none when the run was
// asked to stop (ctxErr set), since a controller asked to stop returning is a clean stop.
func controllerEnded(ctxErr, err error) error {
	switch {
	case ctxErr != nil:
		return nil
	case err == nil:
		return errors.New("the controller stopped by itself")
	default:
		return fmt.Errorf("the controller stopped: %w", err)
	}
}

// applyAll creates the example NodePools (unless disabled) and the workload.
func applyAll(ctx context.Context, kube client.Client, opts Options) error {
	var docs []doc
	if !opts.NoNodePools {
		d, err := readFS(examples.Files, opts.nodePools)
		if err != nil {
			return err
		}
		docs = append(docs, d...)
	}
	if len(opts.Files) == 0 {
		d, err := readFS(examples.Files, "workload.yaml")
		if err != nil {
			return err
		}
		docs = append(docs, d...)
	}
	for _, f := range opts.Files {
		d, err := readFiles(f)
		if err != nil {
			return err
		}
		docs = append(docs, d...)
	}
	for _, d := range docs {
		if err := kube.Create(ctx, d.obj); err != nil {
			return fmt.Errorf("%s: applying %s %s: %w", d.source, d.obj.GetKind(), d.obj.GetName(), err)
		}
	}
	return nil
}

type doc struct {
	source string
	obj    *unstructured.Unstructured
}

func readFS(fsys fs.FS, name string) ([]doc, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	return decode("examples/"+name, data)
}

func readFiles(path string) ([]doc, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return decode(path, data)
	}
	var names []string
	if err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (filepath.Ext(p) == ".yaml" || filepath.Ext(p) == ".yml" || filepath.Ext(p) == ".json") {
			names = append(names, p)
		}
		return err
	}); err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []doc
	for _, n := range names {
		d, err := readFiles(n)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	return out, nil
}

func decode(source string, data []byte) ([]doc, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []doc
	for i := 1; ; i++ {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", source, i, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" {
			return nil, fmt.Errorf("%s: document %d has no kind", source, i)
		}
		out = append(out, doc{source: source, obj: u})
	}
}
