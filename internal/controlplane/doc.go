// Package controlplane starts and stops a real Kubernetes control plane on 127.0.0.1 — etcd,
// kube-apiserver and, on request, kube-scheduler, kube-controller-manager and kwok — for
// integration tests and for `tenon up`.
//
// The binaries are built by hack/build-controlplane.sh into a cache directory keyed by the
// versions (KubernetesVersion, EtcdVersion, KwokVersion); BinDir finds them, and every error
// about missing binaries says to run that script. Tests in other packages use
// internal/controlplane/testenv, which fails (never skips) the test when they are missing.
//
// # What Start runs
//
// Start generates a CA, one serving certificate for 127.0.0.1/localhost, a client certificate
// per identity (all in system:masters) and a service-account key pair (ECDSA P-256, a
// millisecond), then starts, each on a free port of 127.0.0.1 and in its own process group:
//
//   - etcd with --unsafe-no-fsync (its peer listener on port 0: a one-member cluster never
//     dials it); ready on /readyz.
//   - kube-apiserver with RBAC, --advertise-address=127.0.0.1 and
//     --endpoint-reconciler-type=none (1.37 refuses a loopback advertise address otherwise),
//     the ServiceAccount admission plugin disabled (so pods need no ServiceAccount to exist),
//     --service-cluster-ip-range=ServiceClusterIPRange; ready on /readyz.
//   - kube-scheduler (Options.Scheduler) with --leader-elect=false; ready on /readyz.
//   - kube-controller-manager (Options.ControllerManager) with --leader-elect=false,
//     --use-service-account-credentials=false, the service-account key, the CA as
//     --root-ca-file and DefaultControllers; ready on /healthz.
//   - kwok (Options.Kwok) managing only the Nodes annotated
//     KwokNodeAnnotation=KwokNodeAnnotationValue, with the stage file the build script writes
//     (Node initialise, Lease heartbeat, pod ready, complete, delete), 40 s leases, pod IPs
//     from KwokPodCIDR, and --server-address on a free port; ready on /healthz.
//
// kube-scheduler, kube-controller-manager, kwok and the CRDs of Options.CRDs come up
// concurrently once kube-apiserver is ready. A component that loses its port to another
// process between the port's choice and its bind is restarted on another port. On a 2-core
// machine Start takes about 2.5 s for etcd and kube-apiserver alone and about 3 s for the full
// set, and a Deployment's pods are Running on a kwok Node about 0.1 s after that.
//
// # Nodes and pods
//
// A Node created through the API starts with node.kubernetes.io/not-ready:NoSchedule; only the
// controller-manager's node-lifecycle controller removes it, once the Node is Ready, so pods
// schedule on a created Node only with ControllerManager and Kwok both on (or with a
// toleration). Without kwok's Lease heartbeats the controller-manager marks a Node Unknown and
// taints it unreachable after about 50 s. A kwok Node needs status.capacity and
// status.allocatable set at creation (kwok otherwise reports 1k CPUs, 1Ti and 1M pods).
//
// # Lifetime
//
// Start's context bounds Start only. Stop kills every component's process group, waits for
// each to exit and removes a temporary WorkDir; with a WorkDir of the caller's it shuts down
// gracefully instead and keeps the directory. On Linux every component is started with
// Pdeathsig=SIGKILL, so a test binary or `tenon up` killed without calling Stop takes its
// components with it. Done and Err report a component that dies while the control plane runs.
// Component output goes to <WorkDir>/logs/<component>.log (and to Options.Logs when set);
// Start's errors quote the tail of the failing component's log, and LogTails gathers every
// log's tail for a failing test.
package controlplane
