// Package chaos runs tenon's controller as a separate process against a real control plane
// (etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok) and does to it what
// production does: kills it with SIGKILL at random points of a scale-up and of a consolidation,
// fails the simulated cloud's launches, and restarts the API server under it. A watcher samples
// the cluster throughout and checks that no NodePool's disruption budget and no
// PodDisruptionBudget is ever exceeded; at the end the suite checks that no instance leaked, no
// NodeClaim was launched twice, every pod runs and no node is left tainted
// karpenter.sh/disrupted.
//
// Every run prints its seed; -chaos.seed replays it. The default sizes fit CI; see
// docs/reliability.md for the large runs (-chaos.pods, -chaos.kills).
package chaos
