// Package metrics is the controller that publishes the cluster as tenon's mirror holds it,
// under Karpenter's metric names and labels: every few seconds it sets
//
//	karpenter_nodes_allocatable{node_name,phase,managed,<well-known labels>,resource_type}
//	karpenter_pods_state{name,namespace,owner,node,scheduled,nodepool,zone,arch,capacity_type,instance_type,phase,ready,managed}
//	karpenter_nodepools_usage{nodepool,resource_type}, karpenter_nodepools_limit{nodepool,resource_type}
//	karpenter_cluster_state_node_count, karpenter_cluster_state_synced
//
// and, from pod events, observes karpenter_pods_startup_duration_seconds (creation to Ready)
// for every pod it saw Pending. Series of objects that are gone are deleted. Like every tenon
// controller it runs on the elected leader only, so that replicas do not report twice.
package metrics
