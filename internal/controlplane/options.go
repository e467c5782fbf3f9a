package controlplane

import (
	"io"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Component names: the names of the log files (<WorkDir>/logs/<name>.log), of the prefixes on
// Options.Logs, and of the components in errors.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	Scheduler         = "kube-scheduler"
	ControllerManager = "kube-controller-manager"
	Kwok              = "kwok"
)

// KwokNodeAnnotation and KwokNodeAnnotationValue mark the Nodes kwok manages: a Node carrying
// the annotation kwok.x-k8s.io/node=fake is made Ready, kept alive with Lease heartbeats, and
// the pods bound to it are made Running (and complete, and are deleted) as a kubelet would.
// Nodes without it are left alone.
const (
	KwokNodeAnnotation      = "kwok.x-k8s.io/node"
	KwokNodeAnnotationValue = "fake"
)

// KwokPodCIDR is the range kwok assigns pod IPs from.
const KwokPodCIDR = "10.244.0.0/16"

// ServiceClusterIPRange is the kube-apiserver's --service-cluster-ip-range.
const ServiceClusterIPRange = "10.0.0.0/24"

// DefaultControllers is the kube-controller-manager's --controllers when
// Options.Controllers is empty: the workload controllers (Deployment, ReplicaSet,
// ReplicationController, StatefulSet, DaemonSet, Job, CronJob, TTL-after-finished), the node
// lifecycle controller (it removes node.kubernetes.io/not-ready once a Node is Ready and taints
// Nodes whose heartbeats stop), taint-based eviction, the garbage collector, the namespace
// controller, the disruption (PodDisruptionBudget) controller, pod garbage collection, service
// accounts and their tokens, the kube-root-ca.crt publisher, EndpointSlices, ClusterRole
// aggregation, and the ResourceClaim controller (it creates the claims pods' templates name,
// for dynamic resource allocation). Cloud controllers, node IPAM, volume and certificate controllers are
// left out: they need a cloud, a cluster CIDR or kubelets this control plane does not have.
var DefaultControllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"replicationcontroller-controller",
	"statefulset-controller",
	"daemonset-controller",
	"job-controller",
	"cronjob-controller",
	"ttl-after-finished-controller",
	"node-lifecycle-controller",
	"taint-eviction-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"disruption-controller",
	"pod-garbage-collector-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"endpointslice-controller",
	"clusterrole-aggregation-controller",
	"resourceclaim-controller",
}

// Options says which components Start runs and where. The zero value runs etcd and
// kube-apiserver only, from the binaries BinDir finds, in a temporary directory.
type Options struct {
	// BinDir holds the binaries. Empty means the directory BinDir() finds
	// ($TENON_CONTROLPLANE_BIN, else the cache directory hack/build-controlplane.sh writes).
	// Only the binaries the options need must be present; when Kwok is set, kwok-stages.yaml
	// must sit next to BinDir (in its parent directory) unless KwokConfig names another file.
	BinDir string

	// Scheduler also runs kube-scheduler, which binds pods to Nodes.
	Scheduler bool

	// ControllerManager also runs kube-controller-manager with Controllers: it turns
	// Deployments into ReplicaSets into Pods and removes node.kubernetes.io/not-ready from
	// Nodes once they are Ready. Without it, Nodes created through the API keep that taint and
	// no pod is ever scheduled on them.
	ControllerManager bool

	// Controllers overrides DefaultControllers as the kube-controller-manager's --controllers
	// (names as `kube-controller-manager --help` lists them; "*" means all on-by-default).
	Controllers []string

	// Kwok also runs kwok in place of kubelets, for the Nodes annotated
	// KwokNodeAnnotation=KwokNodeAnnotationValue only.
	Kwok bool

	// KwokConfig is kwok's stage configuration (-c). Empty means kwok-stages.yaml next to
	// BinDir, as hack/build-controlplane.sh writes it.
	KwokConfig string

	// CRDs are created (or updated, when they already exist) once kube-apiserver is ready, and
	// Start returns only after each is Established and served in discovery.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	// WorkDir holds etcd's data, certificates, kubeconfigs and logs. Empty means a new
	// temporary directory, removed by Stop. A given WorkDir is created if needed and kept by
	// Stop; etcd's data in it survives a restart, certificates and kubeconfigs are rewritten by
	// every Start.
	WorkDir string

	// Logs, when not nil, also receives every line the components write, each prefixed with
	// "[component] ". Writes are serialised. The per-component files in <WorkDir>/logs are
	// written either way; errors from Start quote the tail of the failing component's file.
	Logs io.Writer

	// ExtraArgs adds or overrides flags of a component, keyed by component name (Etcd,
	// APIServer, ...). Values are whole arguments such as "--v=4"; a flag given here replaces
	// the default flag of the same name.
	ExtraArgs map[string][]string
}
