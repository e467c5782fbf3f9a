// Package ctrltest runs tenon's NodeClaim and NodePool controllers against a real control
// plane (internal/controlplane/testenv: etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager and kwok) with the simulated cloud provider, for the controllers'
// tests. Start starts the control plane with every embedded CRD; Env.StartManager runs a
// controller-runtime manager with the provider and all four controllers; the helpers create
// SimNodeClasses, NodeClaims and pods and wait for what the controllers do. With
// TENON_TEST_LOGS set, the managers log to stderr.
package ctrltest
