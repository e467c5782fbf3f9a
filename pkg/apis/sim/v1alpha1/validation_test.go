package v1alpha1_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/apis/apitest"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	"github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/catalog"
)

const header = "apiVersion: sim.tenon.sh/v1alpha1\nkind: SimNodeClass\nmetadata: {name: test}\n"

// check creates manifest (or updates old to it) with the CRD's validator and returns the
// stored object and the errors, joined.
func check(t *testing.T, kind, manifest, old string) (map[string]interface{}, string) {
	t.Helper()
	v, err := apitest.ValidatorForGroupKind(v1alpha1.Group, kind)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := apitest.Decode(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	if old == "" {
		if errs := v.Create(obj); len(errs) > 0 {
			msg = errs.ToAggregate().Error()
		}
	} else {
		prev, err := apitest.Decode(old)
		if err != nil {
			t.Fatal(err)
		}
		if errs := v.Update(obj, prev); len(errs) > 0 {
			msg = errs.ToAggregate().Error()
		}
	}
	return obj, msg
}

func TestSimNodeClassDefaults(t *testing.T) {
	for _, manifest := range []string{header, header + "spec: {}\n"} {
		obj, msg := check(t, v1alpha1.SimNodeClassKind, manifest, "")
		if msg != "" {
			t.Fatalf("refused: %s", msg)
		}
		got := fmt.Sprint(obj["spec"])
		want := "map[bootDelay:2s devicePluginDelay:3s interruptions:map[maintenanceNotice:10m rebalanceLead:5m scalePercent:100 spotInterruptionModel:none] " +
			"region:us-east-1 registrationDelay:1s rootVolumeSize:20Gi shutdownDelay:0s]"
		if got != want {
			t.Errorf("defaulted spec:\n got %s\nwant %s", got, want)
		}
	}
}

func TestSimNodeClassValidation(t *testing.T) {
	spec := func(s string) string { return header + "spec: " + s + "\n" }
	valid := []string{
		spec(`{region: us-west-2, zones: [us-west-2a, usw2-az2], bootDelay: 100ms, registrationDelay: 1m30s, shutdownDelay: 1h}`),
		spec(`{capacityPools: [{instanceType: m5.large, zone: us-east-1a, capacityType: spot, capacity: 0},
			{requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}, {key: karpenter.k8s.aws/instance-cpu, operator: Gte, values: ["8"]}], capacity: 4}]}`),
		spec(`{reservations: [{id: cr-0abc, instanceType: m5.large, zone: us-east-1a, count: 2}, {id: cr-1, instanceType: c5.large, zone: use1-az2, count: 1, type: targeted}],
			capacityBlocks: [{id: cb-1, instanceType: p5.48xlarge, zone: us-east-1a, count: 1, start: "2026-01-01T00:00:00Z", end: "2026-01-02T00:00:00Z"}]}`),
		spec(`{interruptions: {spotInterruptionModel: advisor, seed: -7, scalePercent: 1000, maintenanceInterval: 720h}}`),
		spec(`{priceOverrides: [{price: "0.05"}, {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}], percent: "-12.5"}]}`),
		spec(`{rootVolumeSize: 100Gi, tags: {owner: me, "cost center": "42"}, labels: {example.com/team: a, node.kubernetes.io/role: worker, plain: "x"}}`),
	}
	for _, m := range valid {
		if _, msg := check(t, v1alpha1.SimNodeClassKind, m, ""); msg != "" {
			t.Errorf("refused a valid SimNodeClass: %s\n%s", msg, m)
		}
	}
	for _, c := range []struct{ manifest, want string }{
		{spec(`{region: eu-west-1}`), `spec.region: Unsupported value: "eu-west-1"`},
		{spec(`{zones: [us-east-1a, us-east-1a]}`), `spec.zones[1]: Duplicate value`},
		{spec(`{zones: [US-EAST-1A]}`), `spec.zones[0]: Invalid value`},
		{spec(`{bootDelay: "2"}`), `spec.bootDelay: Invalid value`},
		{spec(`{devicePluginDelay: 1.5s}`), `spec.devicePluginDelay: Invalid value`},
		{spec(`{capacityPools: [{capacity: -1}]}`), `spec.capacityPools[0].capacity: Invalid value: -1`},
		{spec(`{capacityPools: [{capacityType: reserved, capacity: 1}]}`), `spec.capacityPools[0].capacityType: Unsupported value: "reserved"`},
		{spec(`{capacityPools: [{instanceType: "m5 large", capacity: 1}]}`), `spec.capacityPools[0].instanceType: Invalid value`},
		{spec(`{capacityPools: [{instanceType: m5.large}]}`), `spec.capacityPools[0].capacity: Required value`},
		{spec(`{capacityPools: [{requirements: [{key: a, operator: In}], capacity: 1}]}`), "operators In and NotIn need at least one value"},
		{spec(`{capacityPools: [{requirements: [{key: a, operator: Gt, values: ["1", "2"]}], capacity: 1}]}`), "operators Gt, Lt, Gte and Lte need exactly one value"},
		{spec(`{capacityPools: [{requirements: [{key: a, operator: Exists, values: ["1"]}], capacity: 1}]}`), "operators Exists and DoesNotExist take no values"},
		{spec(`{capacityPools: [{requirements: [{key: a, operator: Near, values: ["1"]}], capacity: 1}]}`), `Unsupported value: "Near"`},
		{spec(`{reservations: [{id: cr-1, instanceType: m5.large, zone: us-east-1a, count: 1, type: shared}]}`), `spec.reservations[0].type: Unsupported value: "shared"`},
		{spec(`{reservations: [{id: cr-1, instanceType: m5.large, zone: us-east-1a, count: 1}, {id: cr-1, instanceType: c5.large, zone: us-east-1a, count: 1}]}`), `spec.reservations[1]: Duplicate value`},
		{spec(`{reservations: [{id: CR_1, instanceType: m5.large, zone: us-east-1a, count: 1}]}`), `spec.reservations[0].id: Invalid value`},
		{spec(`{reservations: [{id: cr-1, instanceType: m5.large, count: 1}]}`), `spec.reservations[0].zone: Required value`},
		{spec(`{reservations: [{id: x, instanceType: m5.large, zone: us-east-1a, count: 1}], capacityBlocks: [{id: x, instanceType: m5.large, zone: us-east-1a, count: 1, start: "2026-01-01T00:00:00Z", end: "2026-01-02T00:00:00Z"}]}`), "a reservation and a capacity block cannot share an id"},
		{spec(`{capacityBlocks: [{id: cb, instanceType: m5.large, zone: us-east-1a, count: 1, start: "2026-01-02T00:00:00Z", end: "2026-01-01T00:00:00Z"}]}`), "end must be after start"},
		{spec(`{interruptions: {spotInterruptionModel: always}}`), `spec.interruptions.spotInterruptionModel: Unsupported value: "always"`},
		{spec(`{interruptions: {scalePercent: -1}}`), `spec.interruptions.scalePercent: Invalid value: -1`},
		{spec(`{priceOverrides: [{price: "1", percent: "2"}]}`), "exactly one of price and percent must be set"},
		{spec(`{priceOverrides: [{requirements: []}]}`), "exactly one of price and percent must be set"},
		{spec(`{priceOverrides: [{price: "-1"}]}`), `spec.priceOverrides[0].price: Invalid value`},
		{spec(`{labels: {kubernetes.io/role: x}}`), "label keys in the domains kubernetes.io, k8s.io and karpenter.sh are restricted"},
		{spec(`{labels: {karpenter.sh/nodepool: x}}`), "label keys in the domains kubernetes.io, k8s.io and karpenter.sh are restricted"},
		{spec(`{labels: {sub.k8s.io/x: z}}`), "label keys in the domains kubernetes.io, k8s.io and karpenter.sh are restricted"},
		{spec(`{rootVolumeSize: lots}`), `spec.rootVolumeSize`},
		{spec(`{unknownField: 1}`), `unknown field "spec.unknownField"`},
	} {
		if _, msg := check(t, v1alpha1.SimNodeClassKind, c.manifest, ""); !strings.Contains(msg, c.want) {
			t.Errorf("want an error containing %q, got %q\n%s", c.want, msg, c.manifest)
		}
	}
}

const instance = `apiVersion: sim.tenon.sh/v1alpha1
kind: SimInstance
metadata: {name: i-0123456789abcdef0}
spec:
  nodeClaim: default-abcde
  nodeClass: default
  region: us-east-1
  zone: us-east-1a
  zoneID: use1-az1
  instanceType: m5.large
  capacityType: on-demand
  price: "0.096"
  launchTime: "2026-03-01T12:00:00.123456Z"
  taints: [{key: dedicated, value: a, effect: NoSchedule}]
status:
  phase: Running
`

func TestSimInstanceValidation(t *testing.T) {
	if _, msg := check(t, v1alpha1.SimInstanceKind, instance, ""); msg != "" {
		t.Fatalf("refused a valid SimInstance: %s", msg)
	}
	for _, c := range []struct{ manifest, old, want string }{
		{strings.Replace(instance, "capacityType: on-demand", "capacityType: dedicated", 1), "", `spec.capacityType: Unsupported value: "dedicated"`},
		{strings.Replace(instance, "phase: Running", "phase: Sleeping", 1), "", `status.phase: Unsupported value: "Sleeping"`},
		{strings.Replace(instance, "effect: NoSchedule", "effect: Sometimes", 1), "", `Unsupported value: "Sometimes"`},
		{strings.Replace(instance, "  price: \"0.096\"\n", "", 1), "", `spec.price: Required value`},
		{strings.Replace(instance, "m5.large", "m5.xlarge", 1), instance, "the spec of a SimInstance cannot be changed"},
	} {
		if _, msg := check(t, v1alpha1.SimInstanceKind, c.manifest, c.old); !strings.Contains(msg, c.want) {
			t.Errorf("want an error containing %q, got %q", c.want, msg)
		}
	}
	if _, msg := check(t, v1alpha1.SimInstanceKind, strings.Replace(instance, "phase: Running", "phase: Terminated", 1), instance); msg != "" {
		t.Errorf("a status update was refused: %s", msg)
	}
}

// The CRD's region enum must list exactly the regions the catalog sells.
func TestRegionEnumMatchesCatalog(t *testing.T) {
	crd, err := crds.Get("simnodeclasses.sim.tenon.sh")
	if err != nil {
		t.Fatal(err)
	}
	region := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["region"]
	var enum []string
	for _, e := range region.Enum {
		enum = append(enum, strings.Trim(string(e.Raw), `"`))
	}
	if fmt.Sprint(enum) != fmt.Sprint(catalog.Regions()) {
		t.Errorf("region enum %v, catalog regions %v", enum, catalog.Regions())
	}
	if v1alpha1.DefaultRegion != catalog.DefaultRegion {
		t.Errorf("default region %s, catalog's %s", v1alpha1.DefaultRegion, catalog.DefaultRegion)
	}
}

func TestPrinterColumns(t *testing.T) {
	for name, want := range map[string]string{
		"simnodeclasses.sim.tenon.sh": `Region:0:.spec.region Zones:0:.status.zones Ready:0:.status.conditions[?(@.type=="Ready")].status ` +
			"Age:0:.metadata.creationTimestamp Interruptions:1:.spec.interruptions.spotInterruptionModel ",
		"siminstances.sim.tenon.sh": "Type:0:.spec.instanceType Zone:0:.spec.zone Capacity:0:.spec.capacityType Phase:0:.status.phase " +
			"Node:0:.status.nodeName NodeClaim:0:.spec.nodeClaim Age:0:.metadata.creationTimestamp Price:1:.spec.price " +
			"Reservation:1:.spec.reservationID NodeClass:1:.spec.nodeClass ",
	} {
		crd, err := crds.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			got += fmt.Sprintf("%s:%d:%s ", c.Name, c.Priority, c.JSONPath)
		}
		if got != want {
			t.Errorf("%s columns:\n got %s\nwant %s", name, got, want)
		}
		if crd.Spec.Scope != "Cluster" {
			t.Errorf("%s is %s-scoped", name, crd.Spec.Scope)
		}
	}
}
