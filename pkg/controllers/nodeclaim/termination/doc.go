// Package termination finishes what deleting a NodeClaim, or its Node, starts: it drains the
// Node, terminates the instance and removes both objects.
//
// A NodeClaim being deleted that holds the termination finalizer goes through these steps,
// each recomputed from the objects on every reconcile, so a controller restarted mid-way
// carries on where the last one stopped:
//
//  1. With spec.terminationGracePeriod set, the claim is annotated
//     karpenter.sh/node-termination-time with its deletion timestamp plus that period, unless
//     the annotation is there already with an earlier time. Another controller may set the
//     annotation before it deletes a claim (the interruption controller sets a notice's
//     deadline): the termination time is the earlier of the two.
//  2. The Node (found by provider ID) is tainted karpenter.sh/disrupted:NoSchedule and drained
//     through the Eviction API (see PlanDrain): non-critical pods first, then critical ones;
//     DaemonSet pods, static pods, finished pods and pods tolerating the disrupted taint stay.
//     A PodDisruptionBudget's refusal (HTTP 429) is recorded as an event and retried with
//     backoff; pods a karpenter.sh/do-not-disrupt annotation protects ("true", or a duration
//     since the pod started that has not run out; see apisv1.PodDoNotDisrupt) are not evicted
//     but waited for, and an invalid value gets an InvalidDoNotDisruptAnnotation warning.
//     Once the termination time leaves a pod no more than its own grace period, the pod is
//     deleted directly; once the termination time passes, the drain is over. The claim's
//     Drained condition follows.
//  3. The termination waits for the Node's VolumeAttachments of persistent volumes to be deleted
//     (except those of pods the drain leaves), so that a volume is detached before its instance
//     goes: VolumesDetached is Unknown (AwaitingVolumeDetachment, an event on the Node) meanwhile,
//     True once none is left, False (TerminationGracePeriodElapsed) when the termination time
//     passes first, and then the instance goes anyway.
//  4. The instance is deleted through CloudProvider.Delete (a NodeClaimNotFoundError means it
//     is gone) and the controller waits until the provider no longer reports it
//     (InstanceTerminating=True meanwhile).
//  5. The Node is deleted and its finalizer removed, then the claim's.
//
// A Node being deleted with the termination finalizer gets its NodeClaim deleted, which
// brings the Node through the steps above. A Node whose NodeClaim is gone has its instance
// deleted and its finalizer removed.
package termination
