package manifest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	karpv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func loadValid(t *testing.T) *manifest.Set {
	t.Helper()
	set, err := manifest.Load("testdata/valid")
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestLoadValidSet(t *testing.T) {
	set := loadValid(t)
	counts := map[string]int{
		"NodePools": len(set.NodePools), "Namespaces": len(set.Namespaces), "Nodes": len(set.Nodes),
		"PriorityClasses": len(set.PriorityClasses), "PodDisruptionBudgets": len(set.PodDisruptionBudgets),
		"DaemonSets": len(set.DaemonSets), "BarePods": len(set.BarePods), "Deployments": len(set.Deployments),
		"ReplicaSets": len(set.ReplicaSets), "StatefulSets": len(set.StatefulSets), "Jobs": len(set.Jobs),
		"CronJobs": len(set.CronJobs), "Other": len(set.Other), "Objects": len(set.Objects),
	}
	want := map[string]int{
		"NodePools": 2, "Namespaces": 1, "Nodes": 1, "PriorityClasses": 1, "PodDisruptionBudgets": 1,
		"DaemonSets": 1, "BarePods": 1, "Deployments": 3, "ReplicaSets": 1, "StatefulSets": 1, "Jobs": 2,
		"CronJobs": 1, "Other": 1, "Objects": 17,
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("counts = %v\nwant     %v", counts, want)
	}
	if got := set.PodCount(); got != 20 {
		t.Errorf("PodCount = %d, want 20", got)
	}
	// Sources follow the files: path, document, first line of the object.
	var sources []string
	for _, o := range set.Objects {
		sources = append(sources, strings.TrimPrefix(o.Source.String(), "testdata/valid/"))
	}
	if sources[0] != "01-cluster.yaml:2: document 1" || sources[3] != "02-nodepools.yaml:22: document 2" ||
		sources[14] != "08-list.json:5: document 1, item 1" || sources[15] != "08-list.json:17: document 2, item 1" {
		t.Errorf("sources = %q", sources)
	}
	// The Service is kept, not dropped.
	if svc := set.Other[0]; svc.GetKind() != "Service" || svc.GetName() != "web" {
		t.Errorf("Other[0] = %s %s", svc.GetKind(), svc.GetName())
	}
}

func TestNodePoolsAreDefaulted(t *testing.T) {
	set := loadValid(t)
	general, gpu := set.NodePools[0], set.NodePools[1]
	if e := general.Spec.Template.Spec.ExpireAfter; e.IsNever() || *e.Duration != 720*time.Hour {
		t.Errorf("general expireAfter = %v, want the default 720h", e)
	}
	if b := general.Spec.Disruption.Budgets; !reflect.DeepEqual(b, []karpv1.Budget{{Nodes: "10%"}}) {
		t.Errorf("general budgets = %+v, want the default", b)
	}
	if !gpu.Spec.Template.Spec.ExpireAfter.IsNever() || gpu.Spec.Disruption.ConsolidationPolicy != karpv1.ConsolidationPolicyWhenEmpty {
		t.Errorf("gpu NodePool lost its settings: %+v", gpu.Spec)
	}
	if general.UID == "" || general.Namespace != "" {
		t.Errorf("general: uid %q, namespace %q", general.UID, general.Namespace)
	}
}

func TestPods(t *testing.T) {
	set := loadValid(t)
	pods := set.Pods()
	if len(pods) != set.PodCount() {
		t.Fatalf("%d pods, PodCount %d", len(pods), set.PodCount())
	}
	byOwner := map[string][]*corev1.Pod{}
	names := map[string]bool{}
	for _, p := range pods {
		if len(p.OwnerReferences) == 1 {
			byOwner[p.OwnerReferences[0].Kind+"/"+p.OwnerReferences[0].Name] = append(byOwner[p.OwnerReferences[0].Kind+"/"+p.OwnerReferences[0].Name], p)
		} else {
			byOwner["none"] = append(byOwner["none"], p)
		}
		if names[p.Namespace+"/"+p.Name] {
			t.Errorf("pod name %s/%s given twice", p.Namespace, p.Name)
		}
		names[p.Namespace+"/"+p.Name] = true
		if p.Spec.SchedulerName != "default-scheduler" || p.Spec.Priority == nil || p.Status.Phase != corev1.PodPending || p.UID == "" || p.Kind != "Pod" {
			t.Errorf("%s: not defaulted: scheduler %q, priority %v, phase %q, uid %q, kind %q", p.Name, p.Spec.SchedulerName, p.Spec.Priority, p.Status.Phase, p.UID, p.Kind)
		}
	}
	web := set.Deployments[0]
	hash := ""
	for owner, ps := range byOwner {
		if h, ok := strings.CutPrefix(owner, "ReplicaSet/web-"); ok {
			hash = h
			if len(ps) != 3 {
				t.Errorf("%s owns %d pods, want 3", owner, len(ps))
			}
		}
	}
	if hash == "" {
		t.Fatalf("no pods owned by a ReplicaSet of web: %v", keys(byOwner))
	}
	for _, p := range byOwner["ReplicaSet/web-"+hash] {
		if !strings.HasPrefix(p.Name, "web-"+hash+"-") || len(p.Name) != len("web-"+hash+"-")+5 || p.Namespace != "default" {
			t.Errorf("web pod %s/%s", p.Namespace, p.Name)
		}
		if p.Labels["app"] != "web" || p.Labels["pod-template-hash"] != hash || p.Labels["pod-template-hash"] == web.Labels["pod-template-hash"] {
			t.Errorf("web pod labels %v", p.Labels)
		}
		c := p.Spec.Containers[0].Resources
		if c.Requests.Cpu().String() != "500m" || c.Requests.Memory().String() != "512Mi" {
			t.Errorf("web requests %v, want the limits", c.Requests)
		}
		sel := p.Spec.TopologySpreadConstraints[0].LabelSelector
		if len(sel.MatchExpressions) != 1 || sel.MatchExpressions[0].Key != "pod-template-hash" || sel.MatchExpressions[0].Values[0] != hash {
			t.Errorf("matchLabelKeys not merged: %+v", sel)
		}
	}
	if len(web.Spec.Template.Spec.TopologySpreadConstraints[0].LabelSelector.MatchExpressions) != 0 {
		t.Error("Pods changed the Deployment's template")
	}

	for owner, want := range map[string]int{"StatefulSet/db": 3, "Job/etl": 4, "Job/shard": 3, "Job/report-150": 1, "ReplicaSet/cache": 2, "none": 1} {
		if got := len(byOwner[owner]); got != want {
			t.Errorf("%s owns %d pods, want %d (owners %v)", owner, got, want, keys(byOwner))
		}
	}
	for i, p := range byOwner["StatefulSet/db"] {
		name := fmt.Sprintf("db-%d", i)
		if p.Name != name || p.Spec.Hostname != name || p.Spec.Subdomain != "db" || p.Labels["apps.kubernetes.io/pod-index"] != fmt.Sprint(i) ||
			p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-"+name {
			t.Errorf("statefulset pod %d: %s hostname %s labels %v volumes %+v", i, p.Name, p.Spec.Hostname, p.Labels, p.Spec.Volumes)
		}
		if e := p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions; len(e) != 1 || e[0].Operator != "NotIn" || e[0].Values[0] != fmt.Sprint(i) {
			t.Errorf("mismatchLabelKeys not merged: %+v", e)
		}
	}
	for i, p := range byOwner["Job/shard"] {
		if !strings.HasPrefix(p.Name, fmt.Sprintf("shard-%d-", i)) || p.Labels["batch.kubernetes.io/job-completion-index"] != fmt.Sprint(i) || p.Spec.Hostname != fmt.Sprintf("shard-%d", i) {
			t.Errorf("indexed job pod %s labels %v hostname %s", p.Name, p.Labels, p.Spec.Hostname)
		}
	}
	etl := byOwner["Job/etl"][0]
	if etl.Labels["job-name"] != "etl" || etl.Labels["batch.kubernetes.io/controller-uid"] != string(set.Jobs[0].UID) || etl.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("job pod labels %v restartPolicy %s", etl.Labels, etl.Spec.RestartPolicy)
	}
	trainer := byOwner["ReplicaSet/"+ownerOf(t, pods, "trainer")][0]
	if *trainer.Spec.Priority != 1000 || *trainer.Spec.PreemptionPolicy != corev1.PreemptNever || trainer.Namespace != "ml" ||
		trainer.Annotations["karpenter.sh/do-not-disrupt"] != "true" {
		t.Errorf("trainer priority %d %s, namespace %s, annotations %v", *trainer.Spec.Priority, *trainer.Spec.PreemptionPolicy, trainer.Namespace, trainer.Annotations)
	}
	if gpu := trainer.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"]; gpu.String() != "1" {
		t.Errorf("trainer gpu request %s, want 1 from the limit", gpu.String())
	}
	if debug := byOwner["none"][0]; debug.Name != "debug" || debug.Spec.Containers[0].Resources.Requests.Cpu().String() != "250m" {
		t.Errorf("bare pod %s requests %v", debug.Name, debug.Spec.Containers[0].Resources.Requests)
	}
}

// ownerOf returns the name of the ReplicaSet that owns the pods of a Deployment.
func ownerOf(t *testing.T, pods []*corev1.Pod, deployment string) string {
	t.Helper()
	for _, p := range pods {
		if ref := p.OwnerReferences; len(ref) == 1 && strings.HasPrefix(ref[0].Name, deployment+"-") && ref[0].Kind == "ReplicaSet" {
			return ref[0].Name
		}
	}
	t.Fatalf("no pod of Deployment %s", deployment)
	return ""
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestDaemonSetsAreNotExpanded(t *testing.T) {
	set := loadValid(t)
	for _, p := range set.Pods() {
		if p.Namespace == "kube-system" {
			t.Errorf("DaemonSet expanded into %s", p.Name)
		}
	}
	pod := set.DaemonSetPod(set.DaemonSets[0])
	if *pod.Spec.Priority != 2000001000 || pod.Spec.Containers[0].Ports[0].HostPort != 9100 || pod.Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" {
		t.Errorf("daemon pod priority %d, ports %+v, requests %v", *pod.Spec.Priority, pod.Spec.Containers[0].Ports, pod.Spec.Containers[0].Resources.Requests)
	}
	tolerated := map[string]bool{}
	for _, tol := range pod.Spec.Tolerations {
		tolerated[tol.Key+":"+string(tol.Effect)] = tol.TolerationSeconds == nil
	}
	for _, key := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unschedulable:NoSchedule", "node.kubernetes.io/network-unavailable:NoSchedule"} {
		if !tolerated[key] {
			t.Errorf("daemon pod does not tolerate %s forever: %+v", key, pod.Spec.Tolerations)
		}
	}
}

// The same manifests give the same objects and pods, whether read as a directory or file by
// file, and every time.
func TestDeterministic(t *testing.T) {
	a, b := loadValid(t), loadValid(t)
	files, err := manifest.Load("testdata/valid/01-cluster.yaml", "testdata/valid/02-nodepools.yaml", "testdata/valid/03-web.yaml",
		"testdata/valid/04-gpu.yaml", "testdata/valid/05-db.yaml", "testdata/valid/06-jobs.yaml", "testdata/valid/07-daemonset.yaml",
		"testdata/valid/08-list.json", "testdata/valid/09-nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, files) {
		t.Error("loading the same manifests twice gave different Sets")
	}
	pa, pb := a.Pods(), b.Pods()
	if !reflect.DeepEqual(pa, pb) || !reflect.DeepEqual(pa, a.Pods()) {
		t.Error("Pods differs between calls")
	}
	pa[0].Labels["changed"] = "yes"
	if _, ok := a.Pods()[0].Labels["changed"]; ok {
		t.Error("Pods returns shared objects")
	}
}

func TestUnknownKindsAreKept(t *testing.T) {
	set, err := manifest.Parse("x.yaml", []byte(`
apiVersion: example.com/v1
kind: Widget
metadata:
  name: default
spec:
  size: 3
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: b
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-x7k2p
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements: [{key: kubernetes.io/arch, operator: Exists}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Other) != 3 || set.Other[0].GetKind() != "Widget" || set.Other[1].GetKind() != "ConfigMap" || set.Other[2].GetKind() != "NodeClaim" {
		t.Fatalf("Other = %v", set.Other)
	}
	if size, _, _ := unstructured.NestedInt64(set.Other[0].Object, "spec", "size"); size != 3 {
		t.Errorf("Widget spec lost: %v", set.Other[0].Object)
	}
	// A kind with an embedded CRD is defaulted by its schema.
	if e, _, _ := unstructured.NestedString(set.Other[2].Object, "spec", "expireAfter"); e != "720h" {
		t.Errorf("NodeClaim expireAfter = %q, want the schema default 720h", e)
	}
}

func TestMetadataAsTheAPIServerSetsIt(t *testing.T) {
	manifests := []byte(`
apiVersion: v1
kind: Namespace
metadata: {name: a, namespace: ignored}
---
apiVersion: v1
kind: Pod
metadata: {generateName: worker-}
spec:
  containers: [{name: a, image: a}]
`)
	set, err := manifest.Parse("x.yaml", manifests)
	if err != nil {
		t.Fatal(err)
	}
	if ns := set.Namespaces[0]; ns.Namespace != "" || ns.UID == "" {
		t.Errorf("namespace %q uid %q: a cluster-scoped object has no namespace and gets a uid", ns.Namespace, ns.UID)
	}
	pod := set.BarePods[0]
	if !strings.HasPrefix(pod.Name, "worker-") || len(pod.Name) != len("worker-")+5 || pod.Namespace != "default" {
		t.Errorf("generated pod %s/%s", pod.Namespace, pod.Name)
	}
	again, err := manifest.Parse("x.yaml", manifests)
	if err != nil {
		t.Fatal(err)
	}
	if again.BarePods[0].Name != pod.Name {
		t.Errorf("generated names differ: %s and %s", again.BarePods[0].Name, pod.Name)
	}
}

func TestEveryErrorIsReported(t *testing.T) {
	_, err := manifest.Parse("many.yaml", []byte(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec:
  replicas: -2
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: b}}
    spec: {containers: []}
---
kind: Pod
---
apiVersion: v1
kind: Namespace
metadata: {name: ok}
`))
	list, ok := err.(manifest.ErrorList)
	if !ok || len(list) != 4 {
		t.Fatalf("want 4 errors (replicas, containers, selector, kind), got %v", err)
	}
	for i, want := range []string{"spec.replicas", "spec.template.spec.containers", "`selector` does not match", "document 2 (Pod): apiVersion not set"} {
		if !strings.Contains(list[i].Error(), want) {
			t.Errorf("error %d = %v, want %q", i, list[i], want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := manifest.Load(); err == nil {
		t.Error("Load() succeeded without paths")
	}
	if _, err := manifest.Load("testdata/none.yaml"); err == nil || !strings.Contains(err.Error(), "testdata/none.yaml") {
		t.Errorf("Load of a missing file = %v", err)
	}
	if _, err := manifest.Load("testdata/valid", "testdata/valid/03-web.yaml"); err == nil || !strings.Contains(err.Error(), "Deployment default/web is also defined at testdata/valid/03-web.yaml:1: document 1") {
		t.Errorf("Load of the same file twice = %v", err)
	}
}

// A directory given with -f is read as kubectl reads it: its own manifest files, not the
// directories below it, unless Recursive (-R); dot-named files and directories are skipped
// either way, and a directory whose manifests are all below it says that -R would read them.
func TestLoadDirectoryDepth(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pool := func(name string) string {
		return "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: " + name + "\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n"
	}
	write("top.yaml", pool("top"))
	write("sub/below.yaml", pool("below"))
	write("sub/deeper/deepest.yml", pool("deepest"))
	write(".hidden/secret.yaml", pool("hidden"))
	write("sub/.dot.yaml", pool("dot"))
	names := func(s *manifest.Set) []string {
		var out []string
		for _, p := range s.NodePools {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	flat, err := manifest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(flat); !slices.Equal(got, []string{"top"}) {
		t.Errorf("Load(dir) read NodePools %v, want only [top]", got)
	}
	deep, err := manifest.LoadWith(manifest.LoadOptions{Recursive: true}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(deep); !slices.Equal(got, []string{"below", "deepest", "top"}) {
		t.Errorf("recursive Load(dir) read NodePools %v, want [below deepest top]", got)
	}
	_, err = manifest.Load(filepath.Join(dir, "sub", "deeper", ".."))
	if err != nil {
		t.Errorf("Load of a directory with its own file: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "top.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = manifest.Load(dir)
	if err == nil || !strings.Contains(err.Error(), "read only with -R") || !strings.Contains(err.Error(), filepath.Join(dir, "sub")) {
		t.Errorf("Load of a directory whose manifests are all below it = %v, want the hint to -R naming %s", err, filepath.Join(dir, "sub"))
	}
}
