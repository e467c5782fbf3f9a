// Package e2e runs tenon's whole loop against a real control plane: etcd, kube-apiserver,
// kube-scheduler, kube-controller-manager and kwok on loopback (internal/controlplane), tenon's
// operator in-process with the simulated cloud, and workloads applied through the API. A pod
// counts as provisioned only when kube-scheduler has bound it and kwok runs it.
package e2e
