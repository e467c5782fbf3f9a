// Package manifest reads the Kubernetes manifests a user hands to tenon's offline tools
// (tenon plan, tenon simulate, tenon up) and turns them into typed objects and the pods their
// workloads would create.
//
// Load reads files, directories and standard input: multi-document YAML, JSON, and List
// objects. Each object is decoded strictly by apiVersion and kind (an unknown or duplicated
// field is an error, as with kubectl apply --validate=strict), checked the way the API server
// would check it where that decides what gets scheduled (replicas, containers, resources,
// selectors, restart policies, names), and kept in a Set in the order read. NodePools and any
// other kind with a CRD in pkg/apis/crds are defaulted and validated against their schema,
// CEL rules included. Kinds the package does not model are kept as Unstructured objects, never
// dropped, and Set.Ignored lists them for the caller to report; but in the API groups tenon
// reads (core, apps, batch, policy, scheduling, storage, node, karpenter.sh, karpenter.k8s.aws,
// sim.tenon.sh and tenon.sh) a kind that does not exist, such as apps/v1 Deploymnet, is an error
// naming the kind meant. Commitments (tenon.sh/v1alpha1) are also checked by their Go
// validation, which refuses a percentage above 100. Every error names the file, the document,
// the line and the object.
//
// Set.Pods expands the workloads into the pods their controllers would create, named as the
// controllers name them and defaulted as the API server defaults them; DaemonSets are kept
// apart because their pods follow the nodes. Expansion reads no clock and draws no random
// numbers: the same manifests give the same pods, in the same order.
package manifest
