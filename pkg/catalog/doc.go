// Package catalog is what a cloud sells: instance types (their shapes, labels, capacity and
// overhead) and the offerings through which each can be bought (zone, capacity type, price,
// availability, reserved capacity), plus price overrides and the price ordering the solver
// chooses claims' instance types with.
//
// Load builds the catalog of an AWS region from data embedded in the binary (data/README.md
// gives its sources and licences): us-east-1 (the default) with every type that has an
// on-demand price there, and us-west-2 with the 75 types priced there. New builds a catalog from
// hand-made types, for tests and synthetic benchmarks.
//
// The package is pure: no clock, no I/O beyond reading the embedded data once, no goroutines.
// Catalogs and instance types are plain structs and slices that the solver compiles further into
// bitsets; treat them as read-only once built.
//
// # Overhead
//
// A node's allocatable resources are its capacity less an Overhead (see ComputeOverhead): CPU
// kube-reserved on a sliding scale, memory kube-reserved by pod count, a hard eviction threshold,
// and the memory the hypervisor keeps. With the defaults the formula reproduces, for all 1,382
// types in the data, the allocatable CPU, memory and ephemeral storage that Karpenter's AWS
// provider documents for Amazon Linux 2023 nodes.
package catalog
