package solver

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

func TestLimitsCountExistingCapacity(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge", "m5.2xlarge")
	pool := nodePool("default", its, onDemand(), func(p *NodePool) {
		p.HasLimit[scheduling.CPU] = true
		p.Limits[scheduling.CPU] = 16000
		p.Usage[scheduling.CPU] = 8000 // an existing 8-vCPU node
	})
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{pool}, Pods: pods(10, "1500m", "1Gi")})
	var cpu int64
	for _, c := range plan.Claims {
		cpu += c.InstanceType.Capacity[scheduling.CPU]
	}
	if cpu > 8000 {
		t.Errorf("new capacity %dm exceeds what the limit leaves (8000m)", cpu)
	}
	if len(plan.Unschedulable) == 0 {
		t.Fatalf("10 × 1.5 cpu cannot fit in 8 vCPU: some pods must be unschedulable")
	}
	if r := plan.Unschedulable[0].Reasons[0]; r.Kind != ReasonLimits {
		t.Errorf("reason %+v, want limits", r)
	}
}

func TestNodeLimit(t *testing.T) {
	its := types(t, "m5.large")
	pool := nodePool("default", its, onDemand(), func(p *NodePool) { p.NodeLimit = 3; p.Nodes = 1 })
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{pool}, Pods: pods(5, "1500m", "1Gi")})
	if len(plan.Claims) != 2 || len(plan.Unschedulable) != 3 {
		t.Fatalf("node limit 3 with 1 node: want 2 claims and 3 unschedulable, got %s", describe(plan))
	}
}

func TestReservedOfferingsPreferredNeverOversubscribed(t *testing.T) {
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(catalog.Reservation{ID: "cr-1", InstanceType: "m5.xlarge", Zone: "us-east-1a", Count: 2}))
	if err != nil {
		t.Fatal(err)
	}
	var its []*catalog.InstanceType
	for _, n := range []string{"m5.large", "m5.xlarge", "m5.2xlarge"} {
		it, _ := cat.Get(n)
		its = append(its, it)
	}
	pool := nodePool("default", its, scheduling.NewRequirements(scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand, apisv1.CapacityTypeReserved)))
	// Each pod needs its own m5.xlarge-sized node (hostname anti-affinity).
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{pool}, Pods: pods(4, "2", "4Gi", labelled("app", "r"), antiAffinity(apisv1.LabelHostname, map[string]string{"app": "r"}))})
	reserved := 0
	for _, c := range plan.Claims {
		if c.Offering.CapacityType == apisv1.CapacityTypeReserved {
			reserved++
			if c.Offering.ReservationID != "cr-1" || c.InstanceType.Name != "m5.xlarge" {
				t.Errorf("reserved claim launches %s %s", c.InstanceType.Name, c.Offering.ReservationID)
			}
		}
	}
	if reserved != 2 || len(plan.Claims) != 4 {
		t.Fatalf("want 2 reserved claims (the reservation's count) and 2 more, got %d reserved of %s", reserved, describe(plan))
	}
}

// Reservation slots promised to claims the snapshot does not show (a disruption pass's
// committed replacements) are counted off: of the two slots, one is left.
func TestReservationsTaken(t *testing.T) {
	cat, err := catalog.Load("us-east-1", catalog.WithReservations(catalog.Reservation{ID: "cr-1", InstanceType: "m5.xlarge", Zone: "us-east-1a", Count: 2}))
	if err != nil {
		t.Fatal(err)
	}
	it, _ := cat.Get("m5.xlarge")
	pool := nodePool("default", []*catalog.InstanceType{it}, scheduling.NewRequirements(scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeOnDemand, apisv1.CapacityTypeReserved)))
	snap := &Snapshot{NodePools: []NodePool{pool}, Pods: pods(3, "2", "4Gi", labelled("app", "r"), antiAffinity(apisv1.LabelHostname, map[string]string{"app": "r"}))}
	prep, err := Prepare(snap)
	if err != nil {
		t.Fatal(err)
	}
	for taken, want := range map[int]int{0: 2, 1: 1, 2: 0, 5: 0} {
		plan, err := prep.Solve(snap.Pods, Options{ReservationsTaken: map[string]int{"cr-1": taken}})
		if err != nil {
			t.Fatal(err)
		}
		reserved := 0
		for _, c := range plan.Claims {
			if c.Offering.CapacityType == apisv1.CapacityTypeReserved {
				reserved++
			}
		}
		if reserved != want || len(plan.Claims) != 3 {
			t.Errorf("%d slots taken: want %d reserved claims of 3, got %d reserved of %s", taken, want, reserved, describe(plan))
		}
	}
}

func TestHostPortsOnePerNode(t *testing.T) {
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{smallPool(t)}, Pods: pods(3, "100m", "128Mi", hostPort(8080))})
	if len(plan.Claims) != 3 {
		t.Fatalf("pods binding the same host port need a node each: %s", describe(plan))
	}
}

func TestCapacityTypeSpread(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge")
	pool := nodePool("default", its, scheduling.NewRequirements(scheduling.In(apisv1.CapacityTypeLabelKey, apisv1.CapacityTypeSpot, apisv1.CapacityTypeOnDemand)))
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{pool}, Pods: pods(4, "500m", "512Mi", labelled("app", "x"), spread(apisv1.CapacityTypeLabelKey, 1, corev1.DoNotSchedule, map[string]string{"app": "x"}))})
	byCT := map[string]int{}
	for _, c := range plan.Claims {
		byCT[c.Offering.CapacityType] += len(c.Pods)
	}
	if byCT[apisv1.CapacityTypeSpot] != 2 || byCT[apisv1.CapacityTypeOnDemand] != 2 {
		t.Fatalf("pods per capacity type %v, want 2 and 2", byCT)
	}
}

func TestCustomKeySpread(t *testing.T) {
	its := types(t, "m5.large", "m5.xlarge")
	pool := nodePool("default", its, onDemand(scheduling.In("rack", "r1", "r2")))
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{pool}, Pods: pods(4, "500m", "512Mi", labelled("app", "x"), spread("rack", 1, corev1.DoNotSchedule, map[string]string{"app": "x"}))})
	byRack := map[string]int{}
	for _, c := range plan.Claims {
		r, _ := c.Requirements.Get("rack")
		if r.Len() != 1 {
			t.Fatalf("claim must be pinned to one rack, got %s", r)
		}
		byRack[r.Values()[0]] += len(c.Pods)
	}
	if byRack["r1"] != 2 || byRack["r2"] != 2 {
		t.Fatalf("pods per rack %v, want 2 and 2", byRack)
	}
}

func TestMinValuesKeepsOptions(t *testing.T) {
	var its []*catalog.InstanceType
	for _, it := range aws(t).Types {
		if it.Shape.Category == "m" {
			its = append(its, it)
		}
	}
	reqs := onDemand()
	r := scheduling.Exists(apisv1.LabelInstanceFamily)
	r.MinValues = 5
	reqs = reqs.Add(r)
	plan, err := Solve(&Snapshot{NodePools: []NodePool{nodePool("default", its, reqs)}, Pods: pods(2, "1", "1Gi")}, Options{MaxInstanceTypes: 3})
	if err != nil {
		t.Fatal(err)
	}
	families := map[string]bool{}
	for _, it := range plan.Claims[0].InstanceTypes {
		families[it.Shape.Family] = true
	}
	if len(families) < 5 {
		t.Fatalf("minValues 5 on instance-family must keep 5 families among the options even past the cap, got %v", families)
	}
}

func TestDeterministic(t *testing.T) {
	snap := &Snapshot{NodePools: awsPools(t), Pods: awsMix("spread")}
	a, err := Solve(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Solve(snap, Options{})
	if a.Price != b.Price || a.LowerBound != b.LowerBound || len(a.Claims) != len(b.Claims) {
		t.Fatalf("two solves differ: %.4f/%.4f vs %.4f/%.4f", a.Price, a.LowerBound, b.Price, b.LowerBound)
	}
	for i := range a.Claims {
		if a.Claims[i].InstanceType != b.Claims[i].InstanceType || !reflect.DeepEqual(a.Claims[i].Pods, b.Claims[i].Pods) {
			t.Fatalf("claim %d differs", i)
		}
	}
}

func TestNodeNameAffinityOnlyExistingNode(t *testing.T) {
	its := types(t, "m5.xlarge")
	alloc := its[0].Allocatable()
	nodes := []Node{{Name: "n1", Initialized: true, Allocatable: alloc}, {Name: "n2", Initialized: true, Allocatable: alloc}}
	p := pod("500m", "512Mi", func(p *corev1.Pod) {
		affinity(p).NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}}},
		}}}
	})
	plan := solveOK(t, &Snapshot{NodePools: []NodePool{smallPool(t)}, Nodes: nodes, Pods: []*corev1.Pod{p}})
	if len(plan.Placements) != 1 || plan.Placements[0].Node != "n2" {
		t.Fatalf("placements %+v", plan.Placements)
	}
}
