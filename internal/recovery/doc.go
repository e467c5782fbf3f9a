// Package recovery keeps a bug in one work item from taking the controller process down.
//
// Every controller loop of tenon runs its work items through it: reconcilers are wrapped in
// Reconciler, and the passes of the loops that are not reconcilers (provisioning batches,
// disruption passes and commands, garbage collection, the simulated kubelet) run inside Guard.
// A panic there is recovered and becomes a *PanicError: it is counted in
// tenon_controller_panics_total{controller}, logged with its stack, and returned, so that the
// caller records a Warning event (reason ControllerPanic) on the object concerned and goes on
// with the next item. A reconcile that panicked is retried with the controller's backoff, as a
// reconcile that failed is.
//
// Tests inject panics with SetTestHook; nothing else calls it.
package recovery
