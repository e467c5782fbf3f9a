// Package simulated is tenon's default cloud provider: it sells the embedded AWS catalog with
// no cloud account, and plays the machines it sells on a real API server.
//
// The cloud itself is the pure model in package cloud. This package connects it to Kubernetes:
//
//   - Provider implements cloudprovider.CloudProvider and cloudprovider.InterruptionQueue.
//     NodePools name a SimNodeClass (nodeClassRef: {group: sim.tenon.sh, kind: SimNodeClass,
//     name: ...}); the provider resolves it into the model's class configuration, cached per
//     generation. Every instance is recorded in a SimInstance object (named by its instance ID;
//     provider ID sim://<region>/<zone>/<instance-id>), and on first use the provider rebuilds
//     the model from those objects, so instances outlive the controller.
//   - Kubelet (a controller-runtime Runnable) plays the machines: registrationDelay after an
//     instance boots it creates the Node (labels from the claim and the instance, the
//     karpenter.sh/unregistered:NoExecute taint and the claim's taints, capacity without device
//     resources, annotation kwok.x-k8s.io/node=fake so that kwok keeps it Ready and runs its
//     pods), adds GPU, Neuron and EFA resources devicePluginDelay later as a device plugin would,
//     deletes the Node when the instance terminates, and writes each instance's progress into
//     its SimInstance status.
//   - NodeClassReconciler reports whether each SimNodeClass resolves (condition Ready) and the
//     zones it sells in.
//
// SetupWithManager adds the reconciler and the Kubelet to a controller-runtime manager.
//
// Time comes from Options.Clock; spot interruptions and injected interruptions (Interrupt)
// become messages on the provider's InterruptionQueue, and the instance is terminated at the
// message's deadline whether or not anyone reads it.
package simulated
