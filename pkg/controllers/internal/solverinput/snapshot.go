package solverinput

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/snapshot"
	"github.com/tenon-sh/tenon/pkg/solver"
	"github.com/tenon-sh/tenon/pkg/state"
)

// EventNodeClassNotReady is the reason of the event recorded on a NodePool whose NodeClass
// cannot serve instance types.
const EventNodeClassNotReady = "NodeClassNotReady"

// OfferingFilter marks offerings that recently failed as unavailable.
type OfferingFilter interface {
	Apply(types []*catalog.InstanceType) []*catalog.InstanceType
}

// Source is where the solver's inputs come from.
type Source struct {
	// Cluster is the mirror. Required.
	Cluster *state.Cluster
	// Cloud serves each NodePool's instance types. Required.
	Cloud cloudprovider.CloudProvider
	// Filter, when set, marks offerings that recently failed as unavailable.
	Filter OfferingFilter
	// Reader reads the PersistentVolumeClaims, PersistentVolumes and StorageClasses of pending
	// pods. Required.
	Reader client.Reader
	// Recorder, when set, receives a NodeClassNotReady event for each NodePool whose NodeClass
	// cannot serve instance types.
	Recorder record.EventRecorder
	// Schedulers are the scheduler names whose pending pods count (none: every scheduler).
	Schedulers []string
	// ExpendablePriorityCutoff: pending pods of a priority below it get no capacity (default
	// scheduling.DefaultExpendableCutoff).
	ExpendablePriorityCutoff *int32
	// StaleNomination, when set, reports whether a pod's nominated node is one tenon nominated
	// it to that has not led to a binding in time: the pod is planned for again.
	StaleNomination func(*corev1.Pod) bool
}

// Pools returns the NodePools that may launch capacity now, by name: those not being deleted,
// not static, and on a NodeClass kind the provider serves (another autoscaler's NodePools are
// left to it).
func (s *Source) Pools() map[string]*apisv1.NodePool {
	pools := map[string]*apisv1.NodePool{}
	for _, np := range s.Cluster.NodePools() {
		if np.DeletionTimestamp == nil && !np.IsStatic() && cloudprovider.IsManagedNodePool(s.Cloud, np) {
			pools[np.Name] = np
		}
	}
	return pools
}

// View is a solver snapshot with the instance types it was built from.
type View struct {
	// Snapshot has the NodePools, nodes, claims in flight, DaemonSets and namespace labels; its
	// Pods are left for the caller.
	Snapshot *solver.Snapshot
	// Types are each NodePool's instance types as the cloud serves them, by pool and name,
	// before the offering filter: the price a node runs at does not change because its offering
	// cannot be bought again right now.
	Types map[string]map[string]*catalog.InstanceType
}

// Lookup finds a NodePool's instance type by name.
func (v *View) Lookup(pool, name string) (*catalog.InstanceType, bool) {
	it, ok := v.Types[pool][name]
	return it, ok
}

// Snapshot gathers the solver's view of the cluster for the given pools: their instance types
// (offerings that recently failed marked unavailable), the nodes and claims in flight, the
// DaemonSets, namespace labels and gangs (PodGroups, where the cluster serves them). An error naming the NodePools or objects that could not be
// read is returned with the view of the rest.
func (s *Source) Snapshot(ctx context.Context, pools map[string]*apisv1.NodePool) (*View, error) {
	v := &View{
		Snapshot: &solver.Snapshot{DaemonSets: s.Cluster.DaemonSets(), NamespaceLabels: s.Cluster.NamespaceLabels(), Gangs: s.Cluster.Gangs()},
		Types:    map[string]map[string]*catalog.InstanceType{},
	}
	filtered := map[string]map[string]*catalog.InstanceType{}
	var errs []error
	for _, np := range s.Cluster.NodePools() {
		if pools[np.Name] == nil {
			continue
		}
		its, err := s.Cloud.GetInstanceTypes(ctx, np)
		if err != nil {
			if cloudprovider.IsNodeClassNotReady(err) && s.Recorder != nil {
				s.Recorder.Eventf(np, corev1.EventTypeWarning, EventNodeClassNotReady, "%v", err)
			}
			errs = append(errs, fmt.Errorf("nodepool %s: %w", np.Name, err))
			continue
		}
		byName := make(map[string]*catalog.InstanceType, len(its))
		for _, it := range its {
			byName[it.Name] = it
		}
		v.Types[np.Name] = byName
		if s.Filter != nil {
			its = s.Filter.Apply(its)
			byName = make(map[string]*catalog.InstanceType, len(its))
			for _, it := range its {
				byName[it.Name] = it
			}
		}
		filtered[np.Name] = byName
		sp, err := snapshot.NodePool(np, its, s.Cluster.Usage(np.Name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v.Snapshot.NodePools = append(v.Snapshot.NodePools, sp)
	}
	// Claims in flight are expected to launch as the cheapest offering that can be bought.
	nodes, err := s.Cluster.SolverNodes(func(pool, name string) (*catalog.InstanceType, bool) {
		it, ok := filtered[pool][name]
		return it, ok
	})
	if err != nil {
		errs = append(errs, err)
	}
	v.Snapshot.Nodes = nodes
	return v, errors.Join(errs...)
}
