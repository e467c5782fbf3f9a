// Package snapshot converts Kubernetes and tenon API objects into the solver's inputs, and the
// solver's new claims back into NodeClaims. The controller's cluster mirror, `tenon plan` and the
// simulator all build their snapshots through it, so the three agree on what a NodePool, a node
// or an in-flight claim means to the solver. PendingPod is where a pending pod becomes the
// solver's input for the provisioner and for tenon plan alike: its volumes' topology (bound PersistentVolumes, StorageClass
// allowedTopologies) joins its node affinity, read through Storage from the API server or the
// manifests.
package snapshot
