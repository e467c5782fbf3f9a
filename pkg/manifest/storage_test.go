package manifest_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tenon-sh/tenon/pkg/manifest"
)

func TestTypoKindInAReadGroupIsAnError(t *testing.T) {
	for _, c := range []struct{ apiVersion, kind, want string }{
		{"apps/v1", "Deploymnet", `no kind "Deploymnet" in apps/v1 (did you mean "Deployment"?)`},
		{"karpenter.sh/v1", "Nodepool", `no kind "Nodepool" in karpenter.sh/v1 (did you mean "NodePool"?)`},
		{"batch/v1", "Cronjob", `(did you mean "CronJob"?)`},
		{"storage.k8s.io/v1", "StorageKlass", `(did you mean "StorageClass"?)`},
		{"sim.tenon.sh/v1alpha1", "SimNodeClas", `(did you mean "SimNodeClass"?)`},
		{"karpenter.k8s.aws/v1", "EC2NodeClas", `(did you mean "EC2NodeClass"?)`},
		{"tenon.sh/v1alpha1", "Comitment", `no kind "Comitment" in tenon.sh/v1alpha1 (did you mean "Commitment"?)`},
		{"tenon.sh/v1alpha1", "commitment", `(did you mean "Commitment"?)`},
		{"v1", "Frobnicator", `no kind "Frobnicator" in v1`},
	} {
		doc := "apiVersion: " + c.apiVersion + "\n# a comment\nkind: " + c.kind + "\nmetadata: {name: x}\n"
		_, err := manifest.Parse("typo.yaml", []byte(doc))
		if err == nil {
			t.Errorf("%s %s: loaded; want an error", c.apiVersion, c.kind)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "typo.yaml:3:") {
			t.Errorf("%s %s: error %q; want it at typo.yaml:3 (the kind's line) and to contain %q", c.apiVersion, c.kind, err, c.want)
		}
	}
}

func TestKindsOfOtherGroupsAreKeptAndReportedAsIgnoredOncePerKind(t *testing.T) {
	set, err := manifest.Parse("x.yaml", []byte(`
apiVersion: example.com/v1
kind: Widget
metadata: {name: a}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: a, image: a}]
`))
	if err != nil {
		t.Fatal(err)
	}
	ignored := set.Ignored(schema.GroupKind{Kind: "Pod"}, schema.GroupKind{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass"})
	var got []string
	for _, k := range ignored {
		got = append(got, k.String()+"="+k.APIVersion+"*"+string(rune('0'+k.Count)))
	}
	if want := "Widget.example.com=example.com/v1*2 ConfigMap=v1*1"; strings.Join(got, " ") != want {
		t.Errorf("ignored %v, want %s", got, want)
	}
	if ignored[0].First.Line != 2 {
		t.Errorf("first Widget at %v, want line 2", ignored[0].First)
	}
}

func TestRuntimeClassGivesItsPodsOverheadAndScheduling(t *testing.T) {
	set, err := manifest.Parse("x.yaml", []byte(`
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
overhead:
  podFixed: {cpu: 250m, memory: 120Mi}
scheduling:
  nodeSelector: {sandbox: gvisor}
  tolerations: [{key: sandbox, operator: Equal, value: gvisor, effect: NoSchedule}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      runtimeClassName: gvisor
      nodeSelector: {tier: web}
      containers: [{name: a, image: a, resources: {requests: {cpu: "1"}}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	pods := set.Pods()
	if len(pods) != 2 {
		t.Fatalf("%d pods", len(pods))
	}
	p := pods[0]
	if q := p.Spec.Overhead[corev1.ResourceCPU]; q.Cmp(resource.MustParse("250m")) != 0 {
		t.Errorf("overhead %v, want the RuntimeClass's", p.Spec.Overhead)
	}
	if p.Spec.NodeSelector["sandbox"] != "gvisor" || p.Spec.NodeSelector["tier"] != "web" {
		t.Errorf("node selector %v, want the pod's and the RuntimeClass's", p.Spec.NodeSelector)
	}
	found := false
	for _, tol := range p.Spec.Tolerations {
		found = found || tol.Key == "sandbox" && tol.Value == "gvisor"
	}
	if !found {
		t.Errorf("tolerations %v lack the RuntimeClass's", p.Spec.Tolerations)
	}
	// DefaultPod is idempotent: admitting again adds nothing.
	n := len(p.Spec.Tolerations)
	set.DefaultPod(p)
	if len(p.Spec.Tolerations) != n {
		t.Errorf("a second DefaultPod added tolerations: %v", p.Spec.Tolerations)
	}
}

func TestStorageObjectsAreReadAndStatefulSetClaimsListed(t *testing.T) {
	set, err := manifest.Parse("x.yaml", []byte(`
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: topology.ebs.csi.aws.com/zone, values: [us-east-1b]}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-db-0}
spec:
  storageClassName: zonal
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: x}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: zonal
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 20Gi}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.StorageClasses) != 1 || len(set.PersistentVolumes) != 1 || len(set.PersistentVolumeClaims) != 1 {
		t.Fatalf("storage objects: %d classes, %d volumes, %d claims", len(set.StorageClasses), len(set.PersistentVolumes), len(set.PersistentVolumeClaims))
	}
	if ns := set.PersistentVolumeClaims[0].Namespace; ns != "default" {
		t.Errorf("claim namespace %q, want default", ns)
	}
	var names []string
	for _, c := range set.VolumeClaims() {
		names = append(names, c.Namespace+"/"+c.Name+"="+c.Spec.Resources.Requests.Storage().String())
	}
	// data-db-0 exists, so the StatefulSet controller uses it as it is.
	if want := "default/data-db-0=10Gi default/data-db-1=20Gi"; strings.Join(names, " ") != want {
		t.Errorf("claims %v, want %s", names, want)
	}
}
