// Package scheduling is the algebra tenon schedules with: label requirements (In, NotIn, Exists,
// DoesNotExist, Gt, Lt, Gte, Lte, minValues), resource vectors, taints and tolerations, and host
// ports.
//
// It is pure: no API server, no clock, no goroutines. Values here are small and immutable once
// built; every operation returns a new value. The solver compiles these forms further into
// bitsets and indexes for its hot paths; the types here are the exact reference those compiled
// forms are tested against.
//
// # Requirement semantics
//
// A Requirement describes the set of states a node's label may be in for one key. A state is
// either "the label is absent" or "the label has value v". The operators map onto sets as follows
// (U is every possible value):
//
//	In V          V
//	NotIn V       absent ∪ (U \ V)
//	Exists        U
//	DoesNotExist  absent
//	Gt n          {v ∈ U : v parses as an integer > n}
//	Gte n         {v ∈ U : v parses as an integer ≥ n}
//	Lt n, Lte n   likewise
//
// Intersect is set intersection, and two requirements are compatible exactly when their
// intersection is not empty. This is the node-affinity semantics of kube-scheduler (NotIn and
// DoesNotExist match nodes without the label; Gt and Lt need the label and an integer value).
package scheduling
