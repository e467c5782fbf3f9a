package up

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws/instance"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

// view renders the cluster's progress: pods, NodeClaims with their shape and price, nodes.
type view struct {
	kube        client.Client
	out         io.Writer
	interactive bool
	start       time.Time
	kubeconfig  string
	binDir      string
	cloud       string // what launches the nodes, for the header
	// endpoint, when set, is the EC2-compatible endpoint the AWS provider launches through:
	// the instances' prices are read there rather than from SimInstances.
	endpoint *awsapi.Server
	lastLine string
}

type claimRow struct {
	name, pool, typ, zone, capacity, state string
	price                                  float64
}

func (v *view) refresh(ctx context.Context) (*Summary, error) {
	var pods corev1.PodList
	if err := v.kube.List(ctx, &pods); err != nil {
		return nil, err
	}
	var claims apisv1.NodeClaimList
	if err := v.kube.List(ctx, &claims); err != nil {
		return nil, err
	}
	var nodes corev1.NodeList
	if err := v.kube.List(ctx, &nodes); err != nil {
		return nil, err
	}
	price, err := v.prices(ctx)
	if err != nil {
		return nil, err
	}
	s := &Summary{Kubeconfig: v.kubeconfig, Nodes: len(nodes.Items), NodeClaims: len(claims.Items)}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Namespace == "kube-system" || ownedByDaemonSet(p) {
			continue
		}
		s.Pods++
		switch p.Status.Phase {
		case corev1.PodRunning, corev1.PodSucceeded:
			s.Running++
		case corev1.PodPending:
			s.Pending++
		}
	}
	var rows []claimRow
	for i := range claims.Items {
		c := &claims.Items[i]
		r := claimRow{
			name: c.Name, pool: c.Labels[apisv1.NodePoolLabelKey], typ: c.Labels[apisv1.LabelInstanceType],
			zone: c.Labels[apisv1.LabelZone], capacity: c.Labels[apisv1.CapacityTypeLabelKey], price: price[c.Name],
			state: "Pending",
		}
		for _, t := range []string{apisv1.ConditionTypeLaunched, apisv1.ConditionTypeRegistered, apisv1.ConditionTypeInitialized} {
			if meta.IsStatusConditionTrue(c.Status.Conditions, t) {
				r.state = t
			}
		}
		if c.DeletionTimestamp != nil {
			r.state = "Terminating"
		}
		s.PricePerHour += r.price
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	v.render(s, rows)
	return s, nil
}

func ownedByDaemonSet(p *corev1.Pod) bool {
	for _, r := range p.OwnerReferences {
		if r.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

func (v *view) render(s *Summary, rows []claimRow) {
	bar := progress(s.Running, s.Pods, 30)
	line := fmt.Sprintf("%s  pods %s %d/%d running, %d pending · %d nodeclaims · %d nodes · $%.4f/h",
		elapsed(v.start), bar, s.Running, s.Pods, s.Pending, s.NodeClaims, s.Nodes, s.PricePerHour)
	if !v.interactive {
		// For logs and scripts: one line whenever something changed.
		short := line[strings.Index(line, "pods"):]
		if short != v.lastLine {
			fmt.Fprintln(v.out, line)
			v.lastLine = short
		}
		return
	}
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	fmt.Fprintf(&b, "tenon up: a local control plane with %s (Ctrl-C to stop)\n", v.cloud)
	fmt.Fprintf(&b, "  export KUBECONFIG=%s PATH=%s:$PATH\n\n", v.kubeconfig, v.binDir)
	fmt.Fprintf(&b, "%s\n\n", line)
	fmt.Fprintf(&b, "  %-28s %-8s %-14s %-11s %-10s %9s  %s\n", "NODECLAIM", "POOL", "TYPE", "ZONE", "CAPACITY", "$/H", "STATE")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-28s %-8s %-14s %-11s %-10s %9.4f  %s\n", r.name, r.pool, r.typ, r.zone, r.capacity, r.price, r.state)
	}
	fmt.Fprint(v.out, b.String())
}

func progress(done, total, width int) string {
	if total == 0 {
		return "[" + strings.Repeat("·", width) + "]"
	}
	n := done * width / total
	return "[" + strings.Repeat("█", n) + strings.Repeat("·", width-n) + "]"
}

// final prints what the run ended with, once the control plane is stopped (stopErr is what
// stopping it returned).
func (v *view) final(s *Summary, stopErr error) {
	if s != nil {
		fmt.Fprintf(v.out, "\n%d/%d pods running on %d nodes for $%.4f/h.\n", s.Running, s.Pods, s.Nodes, s.PricePerHour)
	}
	if stopErr != nil {
		fmt.Fprintf(v.out, "The control plane stopped, but removing its directory failed: %v\n", stopErr)
		return
	}
	fmt.Fprintln(v.out, "The control plane stopped and its directory was removed.")
}

// prices returns what each NodeClaim's instance costs per hour, by claim name.
func (v *view) prices(ctx context.Context) (map[string]float64, error) {
	price := map[string]float64{}
	if v.endpoint != nil {
		for _, in := range v.endpoint.Instances() {
			if name := in.Tags[instance.TagNodeClaim]; name != "" && in.State != "terminated" {
				price[name] = in.Price
			}
		}
		return price, nil
	}
	var insts simv1alpha1.SimInstanceList
	if err := v.kube.List(ctx, &insts); err != nil {
		return nil, err
	}
	for _, in := range insts.Items {
		if p, err := strconv.ParseFloat(in.Spec.Price, 64); err == nil {
			price[in.Spec.NodeClaim] = p
		}
	}
	return price, nil
}
