// Package up runs tenon on one machine, as `tenon up` does: it finds (or builds) the control
// plane binaries, starts a real etcd, kube-apiserver, kube-scheduler, kube-controller-manager
// and kwok on loopback, installs the CRDs, runs tenon's controllers with the simulated cloud,
// applies example NodePools and a demo workload, and shows pods becoming nodes live.
package up
