// Package index registers the field indexes tenon's controllers look objects up by (Nodes and
// NodeClaims by provider ID, Pods by node name) on a manager's cache, and looks them up.
//
// Setup registers them once per manager, so every controller package may call it from its
// Register function.
package index
