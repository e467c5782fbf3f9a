// Package v1alpha1 holds the API of tenon's simulated cloud, in the group sim.tenon.sh, version
// v1alpha1:
//
//   - SimNodeClass is the NodeClass a NodePool names (nodeClassRef: {group: sim.tenon.sh, kind:
//     SimNodeClass, name: ...}) to buy from the simulated cloud: the region and zones it sells
//     in, how long an instance takes to boot and register, capacity pools, reservations,
//     capacity blocks, spot interruptions, price overrides and what nodes are stamped with.
//   - SimInstance is the record of one simulated instance. The simulated cloud keeps its state
//     in these objects, so instances outlive the controller that launched them, as real ones do.
//
// Both kinds are cluster-scoped. Validation lives in the CRD schema that controller-gen derives
// from the markers here (run hack/generate.sh after changing them); what the schema cannot check
// (that a zone belongs to the region, that an instance type is sold there) the simulated cloud
// checks and reports in the SimNodeClass's Ready condition.
//
// +kubebuilder:object:generate=true
// +groupName=sim.tenon.sh
package v1alpha1
