package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/plan"
)

// planFor runs `tenon plan -o json` over the chaos workload's manifests (the NodeClass, both
// NodePools and the Deployments at the given replicas) on an empty cluster: what the solver
// would buy for those pods, at what price, and its proven lower bound.
func planFor(t *testing.T, nc *simv1alpha1.SimNodeClass, want map[string]int32) *plan.Result {
	t.Helper()
	nc = nc.DeepCopy()
	nc.TypeMeta = metav1.TypeMeta{APIVersion: simv1alpha1.SchemeGroupVersion.String(), Kind: simv1alpha1.SimNodeClassKind}
	docs := []any{nc}
	for _, np := range []*apisv1.NodePool{nodePool(poolGeneral, []string{"c5", "m5"}, budgetGeneral), nodePool(poolMemory, []string{"r5"}, budgetMemory)} {
		np.TypeMeta = metav1.TypeMeta{APIVersion: apisv1.SchemeGroupVersion.String(), Kind: apisv1.NodePoolKind}
		docs = append(docs, np)
	}
	for _, s := range shapes {
		n := want[s.name]
		if n == 0 {
			continue
		}
		d := deployment(s, n)
		d.TypeMeta = metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"}
		docs = append(docs, d)
	}
	var buf bytes.Buffer
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	path := filepath.Join(t.TempDir(), "workload.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(tenonBin, "plan", "-o", "json", "-f", path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tenon plan: %v: %s", err, stderr.String())
	}
	var res plan.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("tenon plan's output: %v", err)
	}
	if len(res.Unschedulable) > 0 {
		t.Fatalf("tenon plan leaves %d pods of the workload unschedulable: %+v", len(res.Unschedulable), res.Unschedulable[0])
	}
	return &res
}

// fleet is the workload's live instances: how many, and their $/h at launch.
func (c *cluster) fleet() (n int, price float64, err error) {
	var insts simv1alpha1.SimInstanceList
	if err := c.kube.List(c.ctx, &insts); err != nil {
		return 0, 0, err
	}
	for _, in := range insts.Items {
		if in.Status.Phase == simv1alpha1.InstanceTerminated {
			continue
		}
		p, err := strconv.ParseFloat(in.Spec.Price, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("instance %s: price %q: %w", in.Name, in.Spec.Price, err)
		}
		n++
		price += p
	}
	return n, price, nil
}

// claimsByPool counts the NodeClaims that exist now in each NodePool.
func (c *cluster) claimsByPool() map[string]int {
	var l apisv1.NodeClaimList
	_ = c.kube.List(c.ctx, &l)
	out := map[string]int{}
	for _, nc := range l.Items {
		out[nc.Labels[apisv1.NodePoolLabelKey]]++
	}
	return out
}

// planByPool counts a plan's claims in each NodePool.
func planByPool(r *plan.Result) map[string]int {
	out := map[string]int{}
	for _, cl := range r.Claims {
		out[cl.NodePool]++
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// explainFleet logs, for each node, what `tenon explain` says the disruption loop would do
// with it now, with the decision flags the controller runs with: why a fleet that costs more
// than it should is left as it is.
func (c *cluster) explainFleet(ctl *controller) {
	c.t.Helper()
	var nodes corev1.NodeList
	if err := c.kube.List(c.ctx, &nodes); err != nil {
		c.t.Logf("explaining the fleet: %v", err)
		return
	}
	var flags []string
	for _, a := range ctl.args("127.0.0.1:0") {
		if strings.HasPrefix(a, "--consolidation-") || strings.HasPrefix(a, "--feature-gates") {
			flags = append(flags, a)
		}
	}
	for _, n := range nodes.Items {
		args := append([]string{"explain", "node/" + n.Name, "--kubeconfig=" + c.cp.KubeconfigPath()}, flags...)
		out, err := exec.CommandContext(c.ctx, tenonBin, args...).CombinedOutput()
		if err != nil {
			c.t.Logf("tenon explain node/%s: %v\n%s", n.Name, err, out)
			continue
		}
		c.t.Logf("tenon explain node/%s:\n%s", n.Name, out)
	}
}
