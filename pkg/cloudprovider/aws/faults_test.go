package aws

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

func itoa(i int) string { return strconv.Itoa(i) }

func objKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

// testFaults is the property that no sequence of endpoint faults (throttling, server errors,
// slow responses and lost responses on any EC2 call, insufficient capacity per offering) leaks an instance or
// launches a claim twice: whatever failed along the way, once the faults stop and every
// claim's Create (or Delete) is retried until it succeeds, each live claim has exactly the one
// instance every successful Create returned, every deleted claim has none, and no other
// instance runs.
func testFaults(t *testing.T, api *apiServer) {
	// One endpoint and NodeClass serve every check; each check's claims have their own names,
	// and a check looks only at the instances of its claims.
	e := newEnv(t, api)
	const class = "faults"
	e.nodeClass(t, class, nil)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		// A fresh provider (empty caches) per check; short batch windows keep checks quick
		// (batching is tested elsewhere).
		p, err := New(Options{Client: api.client, EC2: e.EC2, Region: "us-east-1", ClusterName: "tenon", RESTConfig: api.cfg,
			Unavailable: cloudprovider.NewUnavailableOfferings(nil), Instance: instance.Options{BatchIdle: time.Millisecond, BatchMax: 5 * time.Millisecond}})
		if err != nil {
			rt.Fatal(err)
		}
		prefix := fmt.Sprintf("check-%d-", n)
		claims := rapid.IntRange(1, 4).Draw(rt, "claims")
		newClaim := func(i int) *apisv1.NodeClaim {
			return claim(fmt.Sprintf("%s%d", prefix, i), class,
				req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge"),
				req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-east-1a", "us-east-1b"),
				req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand))
		}
		launched := map[int]string{} // claim → the provider ID every successful Create returned
		deleted := map[int]bool{}
		actions := []string{"CreateFleet", "DescribeInstances", "TerminateInstances", "DescribeLaunchTemplates", "CreateLaunchTemplate", ""}
		steps := rapid.IntRange(1, 12).Draw(rt, "steps")
		for range steps {
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0: // a fault
				kind := rapid.SampledFrom([]awsapi.FaultKind{awsapi.FaultThrottle, awsapi.FaultServerError, awsapi.FaultSlow, awsapi.FaultLostResponse}).Draw(rt, "kind")
				e.Server.InjectFault(awsapi.Fault{
					Service: awsapi.ServiceEC2, Action: rapid.SampledFrom(actions).Draw(rt, "action"), Kind: kind,
					Delay: 2 * time.Millisecond, Count: rapid.IntRange(1, 8).Draw(rt, "count"),
				})
			case 1: // capacity comes and goes
				it := rapid.SampledFrom([]string{"m5.large", "m5.xlarge"}).Draw(rt, "type")
				zone := rapid.SampledFrom([]string{"us-east-1a", "us-east-1b"}).Draw(rt, "zone")
				e.Server.SetInsufficientCapacity(it, zone, apisv1.CapacityTypeOnDemand, rapid.Bool().Draw(rt, "ice"))
			case 2, 3: // a launch attempt
				i := rapid.IntRange(0, claims-1).Draw(rt, "claim")
				if deleted[i] {
					continue
				}
				out, err := p.Create(ctx, newClaim(i))
				if err != nil {
					continue
				}
				if prev, ok := launched[i]; ok && prev != out.Status.ProviderID {
					rt.Fatalf("claim %d launched twice: %s, then %s", i, prev, out.Status.ProviderID)
				}
				launched[i] = out.Status.ProviderID
			case 4: // a deletion attempt
				i := rapid.IntRange(0, claims-1).Draw(rt, "claim")
				id, ok := launched[i]
				if !ok {
					continue
				}
				c := newClaim(i)
				c.Status.ProviderID = id
				// Once a claim's deletion has begun the controllers only retry Delete, never
				// Create, whether or not this attempt's answer came back: a TerminateInstances
				// whose answer was lost has terminated the instance all the same.
				_ = p.Delete(ctx, c)
				deleted[i] = true
			}
		}
		// The faults stop; retry what is unfinished, as the lifecycle and termination
		// controllers would.
		e.Server.ClearFaults()
		for _, it := range []string{"m5.large", "m5.xlarge"} {
			for _, zone := range []string{"us-east-1a", "us-east-1b"} {
				e.Server.SetInsufficientCapacity(it, zone, apisv1.CapacityTypeOnDemand, false)
			}
		}
		p.unavailable = nil
		for i := range claims {
			c := newClaim(i)
			if deleted[i] {
				c.Status.ProviderID = launched[i]
				if err := p.Delete(ctx, c); err != nil && !cloudprovider.IsNodeClaimNotFound(err) {
					rt.Fatalf("deleting claim %d without faults: %v", i, err)
				}
				continue
			}
			out, err := p.Create(ctx, c)
			if err != nil {
				rt.Fatalf("creating claim %d without faults: %v", i, err)
			}
			if prev, ok := launched[i]; ok && prev != out.Status.ProviderID {
				rt.Fatalf("claim %d launched twice: %s, then %s", i, prev, out.Status.ProviderID)
			}
			launched[i] = out.Status.ProviderID
		}
		live := map[string]string{} // provider ID → claim
		for _, inst := range e.Server.Instances() {
			if (inst.State == "pending" || inst.State == "running") && strings.HasPrefix(inst.Tags[instance.TagNodeClaim], prefix) {
				live[inst.ProviderID] = inst.Tags[instance.TagNodeClaim]
			}
		}
		for i := range claims {
			name := newClaim(i).Name
			_, running := live[launched[i]]
			switch {
			case deleted[i] && running:
				rt.Fatalf("deleted claim %d still has instance %s", i, launched[i])
			case !deleted[i] && !running:
				rt.Fatalf("claim %d's instance %s is not running", i, launched[i])
			}
			if running {
				delete(live, launched[i])
			}
			for id, owner := range live {
				if owner == name {
					rt.Fatalf("claim %d has a second instance %s besides %s", i, id, launched[i])
				}
			}
		}
		if len(live) > 0 {
			rt.Fatalf("leaked instances: %v", live)
		}
	})
}

// testLostCreateFleet: a CreateFleet that launched but whose every answer was lost (the SDK's
// retries carry the same ClientToken and are lost too) fails the Create, and the next Create
// of the claim, by this provider or a restarted one, finds the instance by its tag instead of
// launching a second; a single lost answer is absorbed by the SDK's retry.
func testLostCreateFleet(t *testing.T, e *env) {
	e.nodeClass(t, "lost", nil)
	onDemand := req(apisv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, apisv1.CapacityTypeOnDemand)
	c := claim("lost-1", "lost", onDemand)
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultLostResponse})
	if _, err := e.p.Create(ctx, c); err == nil {
		t.Fatal("Create succeeded though every CreateFleet answer was lost")
	}
	insts := e.Server.Instances()
	if len(insts) != 1 || insts[0].Tags[instance.TagNodeClaim] != c.Name {
		t.Fatalf("after the lost answers: instances %+v, want the one the first attempt launched, tagged for %s", insts, c.Name)
	}
	e.Server.ClearFaults()
	restarted, err := New(Options{Client: e.api.client, EC2: e.EC2, Region: "us-east-1", ClusterName: "tenon", RESTConfig: e.api.cfg})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Provider{e.p, restarted} {
		out, err := p.Create(ctx, c)
		if err != nil || out.Status.ProviderID != insts[0].ProviderID {
			t.Fatalf("Create after the loss = %v, %v; want the instance already launched, %s", out.Status.ProviderID, err, insts[0].ProviderID)
		}
	}
	e.Server.InjectFault(awsapi.Fault{Service: awsapi.ServiceEC2, Action: "CreateFleet", Kind: awsapi.FaultLostResponse, Count: 1})
	out, err := e.p.Create(ctx, claim("lost-2", "lost", onDemand))
	if err != nil {
		t.Fatalf("one lost answer: %v", err)
	}
	live := 0
	for _, inst := range e.Server.Instances() {
		if inst.Tags[instance.TagNodeClaim] == "lost-2" {
			live++
			if inst.ProviderID != out.Status.ProviderID {
				t.Errorf("lost-2 has instance %s, Create returned %s", inst.ProviderID, out.Status.ProviderID)
			}
		}
	}
	if hits := e.Server.FaultHits(); live != 1 || len(hits) != 1 || hits[0] != 1 {
		t.Fatalf("one lost answer: %d instances for lost-2, fault hits %v; want 1 instance after 1 lost answer", live, hits)
	}
}
