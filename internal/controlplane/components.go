package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// stopGrace is how long a component has to exit after SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// launchAttempts bounds the retries when a component loses its port to another process between
// freePort and its bind.
const launchAttempts = 3

// spec says how to run one component on a given port and how to tell it is ready.
type spec struct {
	name  string
	args  func(port int) []string
	probe func(port int) probe
}

// launch starts s on a free port and waits until it is ready, retrying on a port conflict.
func (c *ControlPlane) launch(ctx context.Context, s spec) (*process, int, error) {
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: no free port: %w", s.name, err)
		}
		args := mergeArgs(s.args(port), c.opts.ExtraArgs[s.name])
		p, err := startProcess(s.name, filepath.Join(c.binDir, s.name), args, c.workDir, c.logPath(s.name), c.opts.Logs, c.onExit)
		if err != nil {
			return nil, 0, err
		}
		c.track(p)
		err = waitReady(ctx, p, s.probe(port))
		if err == nil {
			return p, port, nil
		}
		p.stop(0) // it never became ready: nothing to shut down gracefully
		if attempt < launchAttempts && ctx.Err() == nil && portConflict(tailFile(p.logPath, 50)) {
			continue
		}
		return nil, 0, err
	}
}

// mergeArgs returns defaults with every flag named in extra replaced by extra's.
func mergeArgs(defaults, extra []string) []string {
	name := func(a string) string { n, _, _ := strings.Cut(a, "="); return n }
	override := map[string]bool{}
	for _, a := range extra {
		override[name(a)] = true
	}
	out := make([]string, 0, len(defaults)+len(extra))
	var gates []string // the defaults' feature gates, kept under the extra ones
	for _, a := range defaults {
		switch {
		case name(a) == "--feature-gates" && override[name(a)]:
			gates = append(gates, strings.TrimPrefix(a, "--feature-gates="))
		case !override[name(a)]:
			out = append(out, a)
		}
	}
	for _, a := range extra {
		if name(a) == "--feature-gates" && len(gates) > 0 {
			// Feature gates add up: a later setting of one gate wins.
			a = "--feature-gates=" + strings.Join(append(gates, strings.TrimPrefix(a, "--feature-gates=")), ",")
		}
		out = append(out, a)
	}
	return out
}

func (c *ControlPlane) etcdSpec() spec {
	return spec{
		name: Etcd,
		args: func(port int) []string {
			u := "http://127.0.0.1:" + strconv.Itoa(port)
			return []string{
				"--name=tenon",
				"--data-dir=" + filepath.Join(c.workDir, "etcd"),
				"--listen-client-urls=" + u,
				"--advertise-client-urls=" + u,
				// The peer port is never dialled in a one-member cluster: let the kernel pick it.
				"--listen-peer-urls=http://127.0.0.1:0",
				"--initial-advertise-peer-urls=http://127.0.0.1:2380",
				"--initial-cluster=tenon=http://127.0.0.1:2380",
				"--unsafe-no-fsync",
				"--log-level=warn",
			}
		},
		probe: func(port int) probe {
			return probe{url: fmt.Sprintf("http://127.0.0.1:%d/readyz", port), client: c.plainClient}
		},
	}
}

// WorkloadFeatureGates are the Kubernetes feature gates the control plane runs with for
// workload-aware scheduling: PodGroups (GenericWorkload, beta and off by default in 1.37) and
// kube-scheduler's placement of a group in one domain of its topology key
// (TopologyAwareWorkloadScheduling, alpha). Gang scheduling comes with GenericWorkload.
const WorkloadFeatureGates = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"

func (c *ControlPlane) apiserverSpec(etcdPort int) spec {
	f := c.files
	return spec{
		name: APIServer,
		args: func(port int) []string {
			return []string{
				"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(etcdPort),
				"--bind-address=127.0.0.1",
				"--advertise-address=127.0.0.1",
				// 1.37 refuses a loopback advertise address unless the endpoint reconciler is off.
				"--endpoint-reconciler-type=none",
				"--secure-port=" + strconv.Itoa(port),
				"--cert-dir=" + filepath.Join(c.workDir, "pki"),
				"--tls-cert-file=" + f.servingCert,
				"--tls-private-key-file=" + f.servingKey,
				"--client-ca-file=" + f.caCert,
				"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
				"--service-account-key-file=" + f.saPub,
				"--service-account-signing-key-file=" + f.saKey,
				"--service-cluster-ip-range=" + ServiceClusterIPRange,
				"--authorization-mode=RBAC",
				// Without it a pod created in a namespace whose default ServiceAccount the
				// controller-manager has not made yet is refused.
				"--disable-admission-plugins=ServiceAccount",
				"--allow-privileged=true",
				"--profiling=false",
				// PodGroups and gang scheduling (scheduling.k8s.io/v1beta1 in 1.37, the version
				// kube-scheduler watches), which tenon plans by.
				"--feature-gates=" + WorkloadFeatureGates,
				"--runtime-config=scheduling.k8s.io/v1beta1=true",
			}
		},
		probe: func(port int) probe {
			return probe{url: fmt.Sprintf("https://127.0.0.1:%d/readyz", port), client: c.adminClient}
		},
	}
}

func (c *ControlPlane) schedulerSpec() spec {
	return spec{
		name: Scheduler,
		args: func(port int) []string {
			return append(c.componentServingArgs(Scheduler, port), "--leader-elect=false", "--feature-gates="+WorkloadFeatureGates)
		},
		probe: func(port int) probe {
			return probe{url: fmt.Sprintf("https://127.0.0.1:%d/readyz", port), client: c.servingClient}
		},
	}
}

func (c *ControlPlane) controllerManagerSpec() spec {
	controllers := c.opts.Controllers
	if len(controllers) == 0 {
		controllers = DefaultControllers
	}
	return spec{
		name: ControllerManager,
		args: func(port int) []string {
			return append(c.componentServingArgs(ControllerManager, port),
				"--leader-elect=false",
				"--controllers="+strings.Join(controllers, ","),
				"--use-service-account-credentials=false",
				"--service-account-private-key-file="+c.files.saKey,
				"--root-ca-file="+c.files.caCert,
			)
		},
		probe: func(port int) probe {
			return probe{url: fmt.Sprintf("https://127.0.0.1:%d/healthz", port), client: c.servingClient}
		},
	}
}

// componentServingArgs are the flags kube-scheduler and kube-controller-manager share: their
// kubeconfig and a secure port on loopback serving the control plane's certificate.
func (c *ControlPlane) componentServingArgs(name string, port int) []string {
	return []string{
		"--kubeconfig=" + c.componentKubeconfig(name),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + c.files.servingCert,
		"--tls-private-key-file=" + c.files.servingKey,
	}
}

func (c *ControlPlane) kwokSpec(stages string) spec {
	return spec{
		name: Kwok,
		args: func(port int) []string {
			return []string{
				"--kubeconfig=" + c.componentKubeconfig(Kwok),
				"--config=" + stages,
				"--manage-all-nodes=false",
				"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeAnnotationValue,
				"--node-lease-duration-seconds=40",
				"--cidr=" + KwokPodCIDR,
				// Serves /healthz, the readiness probe, once kwok's controllers have started.
				"--server-address=127.0.0.1:" + strconv.Itoa(port),
			}
		},
		probe: func(port int) probe {
			return probe{url: fmt.Sprintf("http://127.0.0.1:%d/healthz", port), client: c.plainClient}
		},
	}
}
