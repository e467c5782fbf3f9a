package charts_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Both charts pass `helm lint` (the SDK's lint package, as the CLI runs it) with no error or
// warning, with their default values and with every optional object switched on.
func TestChartsLintClean(t *testing.T) {
	cases := []struct {
		dir    string
		values map[string]any
	}{
		{"tenon", nil},
		{"tenon", map[string]any{
			"serviceMonitor": map[string]any{"enabled": true},
			"dashboards":     map[string]any{"enabled": true, "annotations": map[string]any{"grafana_folder": "tenon"}},
			"settings":       map[string]any{"cloudProvider": "aws", "clusterName": "prod", "interruptionQueue": "prod", "kubeClientQPS": 100, "kubeClientBurst": 200, "isolatedVPC": true},
			"image":          map[string]any{"digest": "sha256:" + strings.Repeat("a", 64)},
		}},
		{"tenon-crd", nil},
	}
	for _, c := range cases {
		result := lint.RunAll(c.dir, c.values, releaseNamespace)
		for _, m := range result.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint %s (values %v): %s", c.dir, c.values, m)
			} else {
				t.Logf("helm lint %s: %s", c.dir, m)
			}
		}
	}
}

// A misspelled or unknown value fails the render (values.schema.json), instead of being
// silently ignored; so does a value of the wrong type or outside what tenon accepts.
func TestValuesSchemaRejectsTypos(t *testing.T) {
	bad := map[string]map[string]any{
		"misspelled top-level key":  {"replica": 3},
		"misspelled setting":        {"settings": map[string]any{"clusterNmae": "prod"}},
		"misspelled feature gate":   {"settings": map[string]any{"featureGates": map[string]any{"spotToSpot": true}}},
		"gate tenon cannot honour":  {"settings": map[string]any{"featureGates": map[string]any{"nodeRepair": true}}},
		"unknown log level":         {"logLevel": "verbose"},
		"unknown cloud provider":    {"settings": map[string]any{"cloudProvider": "gce"}},
		"duration without a unit":   {"settings": map[string]any{"batchIdleDuration": "1"}},
		"replicas as a string":      {"replicas": "2"},
		"IRSA annotation not a map": {"serviceAccount": map[string]any{"annotations": "arn:aws:iam::1:role/x"}},
		"misspelled image key":      {"image": map[string]any{"repo": "example.com/tenon"}},
		"misspelled dashboards key": {"dashboards": map[string]any{"enable": true}},
		"takeover as a string":      {"settings": map[string]any{"takeover": "yes"}},
		"lease namespace invalid":   {"settings": map[string]any{"karpenterLeaderElectionNamespace": "Kube_System"}},
	}
	for what, values := range bad {
		if _, err := render(t, "tenon", values); err == nil {
			t.Errorf("%s: %v rendered without error", what, values)
		} else if !strings.Contains(err.Error(), "schema") {
			t.Errorf("%s: the error does not come from the schema: %v", what, err)
		}
	}
	// Karpenter's values for the gates tenon fixes are accepted at the value tenon uses.
	ok := map[string]any{"settings": map[string]any{"featureGates": map[string]any{"reservedCapacity": true, "nodeRepair": false}}}
	if _, err := render(t, "tenon", ok); err != nil {
		t.Errorf("Karpenter's default gates rejected: %v", err)
	}
}

// The default manifests, as `helm template tenon charts/tenon -n tenon-system` renders them.
func TestGoldenDefaultManifests(t *testing.T) {
	out := mustRender(t, "tenon", nil)
	var b bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(out)) {
		b.WriteString("# Source: " + name + "\n")
		b.WriteString(strings.TrimSpace(out[name]) + "\n---\n")
	}
	golden(t, "tenon-default.yaml", b.Bytes())
}

// The CRDs both charts ship are the files hack/generate.sh writes, byte for byte, and all of
// them: a CRD added to pkg/apis/crds and not linked into a chart fails here.
func TestChartCRDsAreTheGeneratedOnes(t *testing.T) {
	generated := map[string][]byte{}
	paths, err := filepath.Glob(filepath.Join("..", "pkg", "apis", "crds", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no generated CRDs found: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		generated[filepath.Base(p)] = b
	}
	for _, c := range []struct{ chart, dir string }{{"tenon-crd", "templates/"}, {"tenon", "crds/"}} {
		ch := loadChart(t, c.chart)
		shipped := map[string][]byte{}
		for _, f := range append(slices.Clone(ch.Templates), ch.Files...) {
			if strings.HasPrefix(f.Name, c.dir) && strings.HasSuffix(f.Name, ".yaml") {
				shipped[strings.TrimPrefix(f.Name, c.dir)] = f.Data
			}
		}
		for name, want := range generated {
			got, ok := shipped[name]
			switch {
			case !ok:
				t.Errorf("chart %s does not ship %s: link it (ln -s ../../../pkg/apis/crds/%s charts/%s/%s)", c.chart, name, name, c.chart, c.dir)
			case !bytes.Equal(got, want):
				t.Errorf("chart %s ships a %s that differs from pkg/apis/crds/%s", c.chart, name, name)
			}
		}
		for name := range shipped {
			if _, ok := generated[name]; !ok {
				t.Errorf("chart %s ships %s%s, which hack/generate.sh does not write", c.chart, c.dir, name)
			}
		}
	}
	// The CRD chart renders them unchanged (they hold no template actions).
	out := mustRender(t, "tenon-crd", nil)
	for name, want := range generated {
		if got := out["tenon-crd/templates/"+name]; got != string(want) {
			t.Errorf("tenon-crd renders %s differently from the generated file", name)
		}
	}
	// The links stay links: a copy could drift.
	for _, dir := range []string{"tenon-crd/templates", "tenon/crds"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".yaml") && e.Type()&fs.ModeSymlink == 0 {
				t.Errorf("%s/%s is a copy, not a link to pkg/apis/crds/%s", dir, e.Name(), e.Name())
			}
		}
	}
}

// container returns the rendered Deployment's controller container.
func container(t *testing.T, values map[string]any) map[string]any {
	t.Helper()
	d := find(t, objects(t, mustRender(t, "tenon", values)), "Deployment")
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("want one container, got %d", len(cs))
	}
	return cs[0].(map[string]any)
}

func envOf(c map[string]any) map[string]string {
	env := map[string]string{}
	list, _, _ := unstructured.NestedSlice(c, "env")
	for _, e := range list {
		m := e.(map[string]any)
		v, _ := m["value"].(string)
		env[m["name"].(string)] = v
	}
	return env
}

func argsOf(c map[string]any) []string {
	args, _, _ := unstructured.NestedStringSlice(c, "args")
	return args
}

// The settings tenon has no flag for yet reach it as Karpenter's environment variables, and
// only when set; the rest are flags.
func TestSettingsBecomeFlagsAndKarpenterEnvironment(t *testing.T) {
	if env := envOf(container(t, nil)); len(env) != 0 {
		t.Errorf("default values set environment variables: %v", env)
	}
	c := container(t, map[string]any{
		"settings": map[string]any{
			"clusterName": "prod", "clusterEndpoint": "https://api.example.com", "interruptionQueue": "prod-q",
			"awsEndpointURL": "http://127.0.0.1:4566", "isolatedVPC": true, "kubeClientQPS": 150, "kubeClientBurst": 300,
			"featureGates":   map[string]any{"spotToSpotConsolidation": true},
			"schedulerNames": []any{"default-scheduler", "batch"},
		},
		"extraEnv": []any{map[string]any{"name": "EXTRA", "value": "1"}},
	})
	want := map[string]string{
		"CLUSTER_NAME": "prod", "CLUSTER_ENDPOINT": "https://api.example.com", "INTERRUPTION_QUEUE": "prod-q",
		"AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "ISOLATED_VPC": "true", "KUBE_CLIENT_QPS": "150", "KUBE_CLIENT_BURST": "300", "EXTRA": "1",
	}
	if got := envOf(c); !maps.Equal(got, want) {
		t.Errorf("environment = %v, want %v", got, want)
	}
	args := argsOf(c)
	for _, a := range []string{"--feature-gates=NodeOverlay=false,SpotToSpotConsolidation=true,StaticCapacity=false", "--scheduler-names=default-scheduler,batch", "--leader-election-namespace=" + releaseNamespace} {
		if !slices.Contains(args, a) {
			t.Errorf("args %v lack %s", args, a)
		}
	}
}

// The image tag defaults to the chart's appVersion; a digest pins it instead.
func TestImageDefaultsToTheAppVersion(t *testing.T) {
	ch := loadChart(t, "tenon")
	if got, want := container(t, nil)["image"], "tenon:"+ch.Metadata.AppVersion; got != want {
		t.Errorf("image = %v, want %s", got, want)
	}
	if got := container(t, map[string]any{"image": map[string]any{"repository": "example.com/tenon", "tag": "v9"}})["image"]; got != "example.com/tenon:v9" {
		t.Errorf("image with a tag = %v", got)
	}
	digest := "sha256:" + strings.Repeat("0", 64)
	if got := container(t, map[string]any{"image": map[string]any{"digest": digest}})["image"]; got != "tenon@"+digest {
		t.Errorf("image with a digest = %v", got)
	}
}

// The ServiceAccount carries its annotations (IRSA's role ARN); RBAC binds it.
func TestServiceAccountAnnotationsForIRSA(t *testing.T) {
	arn := "arn:aws:iam::111122223333:role/tenon"
	objs := objects(t, mustRender(t, "tenon", map[string]any{
		"serviceAccount":        map[string]any{"annotations": map[string]any{"eks.amazonaws.com/role-arn": arn}},
		"additionalAnnotations": map[string]any{"team": "infra"},
	}))
	sa := find(t, objs, "ServiceAccount")
	if got := sa.GetAnnotations(); got["eks.amazonaws.com/role-arn"] != arn || got["team"] != "infra" {
		t.Errorf("ServiceAccount annotations = %v", got)
	}
	for _, o := range objs {
		if o.GetAnnotations()["team"] != "infra" {
			t.Errorf("%s %s lacks the additional annotations: %v", o.GetKind(), o.GetName(), o.GetAnnotations())
		}
	}
	bindings := 0
	for _, o := range objs {
		if kind := o.GetKind(); kind != "ClusterRoleBinding" && kind != "RoleBinding" {
			continue
		}
		bindings++
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != sa.GetName() || subjects[0].(map[string]any)["namespace"] != releaseNamespace {
			t.Errorf("%s %s subjects = %v", o.GetKind(), o.GetName(), subjects)
		}
	}
	if bindings != 3 {
		t.Errorf("%d bindings, want the ClusterRoleBinding and two RoleBindings", bindings)
	}
}

// No rule grants Secrets or ConfigMaps, or any wildcard.
func TestRBACGrantsNoSecretsAndNoWildcards(t *testing.T) {
	for _, provider := range []string{"simulated", "aws"} {
		objs := objects(t, mustRender(t, "tenon", map[string]any{"settings": map[string]any{"cloudProvider": provider}}))
		for _, o := range objs {
			kind := o.GetKind()
			if kind != "ClusterRole" && kind != "Role" {
				continue
			}
			rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
			for _, r := range rules {
				m := r.(map[string]any)
				for _, field := range []string{"apiGroups", "resources", "verbs"} {
					vals, _, _ := unstructured.NestedStringSlice(m, field)
					for _, v := range vals {
						if v == "*" || v == "secrets" || v == "configmaps" {
							t.Errorf("%s (%s) grants %s %q: %v", kind, provider, field, v, m)
						}
					}
				}
			}
		}
	}
}

// The chart lets tenon read Karpenter's leader-election Lease, and nothing else, in the
// namespace Karpenter runs in (settings.karpenterLeaderElectionNamespace), and passes that
// Lease to tenon; settings.takeover becomes --takeover.
func TestKarpenterLeaseRoleAndTakeover(t *testing.T) {
	for _, c := range []struct {
		values          map[string]any
		namespace, name string
		takeover        bool
	}{
		{nil, "kube-system", "karpenter-leader-election", false},
		{map[string]any{"settings": map[string]any{"karpenterLeaderElectionNamespace": "karpenter", "karpenterLeaderElectionName": "kl", "takeover": true}}, "karpenter", "kl", true},
	} {
		objs := objects(t, mustRender(t, "tenon", c.values))
		var role, binding *unstructured.Unstructured
		for _, o := range objs {
			if o.GetNamespace() != c.namespace {
				continue
			}
			switch o.GetKind() {
			case "Role":
				role = o
			case "RoleBinding":
				binding = o
			}
		}
		if role == nil || binding == nil {
			t.Fatalf("values %v: no Role and RoleBinding in %s", c.values, c.namespace)
		}
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		want := []any{map[string]any{"apiGroups": []any{"coordination.k8s.io"}, "resources": []any{"leases"}, "resourceNames": []any{c.name}, "verbs": []any{"get"}}}
		if !reflect.DeepEqual(rules, want) {
			t.Errorf("values %v: the Role in %s grants %v, want %v", c.values, c.namespace, rules, want)
		}
		if ref, _, _ := unstructured.NestedString(binding.Object, "roleRef", "name"); ref != role.GetName() {
			t.Errorf("values %v: the RoleBinding binds %s, want %s", c.values, ref, role.GetName())
		}
		args := argsOf(container(t, c.values))
		for _, a := range []string{"--karpenter-leader-election-namespace=" + c.namespace, "--karpenter-leader-election-name=" + c.name} {
			if !slices.Contains(args, a) {
				t.Errorf("values %v: args %v lack %s", c.values, args, a)
			}
		}
		if got := slices.Contains(args, "--takeover"); got != c.takeover {
			t.Errorf("values %v: --takeover in args is %t, want %t", c.values, got, c.takeover)
		}
	}
}

// With dashboards.enabled each dashboard of charts/tenon/dashboards becomes a ConfigMap with
// Grafana's sidecar label, holding the file as it is; by default there are none.
func TestDashboardConfigMaps(t *testing.T) {
	for _, o := range objects(t, mustRender(t, "tenon", nil)) {
		if o.GetKind() == "ConfigMap" {
			t.Errorf("the default values render ConfigMap %s", o.GetName())
		}
	}
	files, err := filepath.Glob(filepath.Join("tenon", "dashboards", "*.json"))
	if err != nil || len(files) != 3 {
		t.Fatalf("dashboards: %v %v", files, err)
	}
	objs := objects(t, mustRender(t, "tenon", map[string]any{"dashboards": map[string]any{
		"enabled": true, "namespace": "monitoring", "annotations": map[string]any{"grafana_folder": "tenon"},
	}}))
	byFile := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(o.Object, "data")
		if len(data) != 1 {
			t.Errorf("ConfigMap %s holds %d files, want one dashboard", o.GetName(), len(data))
		}
		for k := range data {
			byFile[k] = o
		}
	}
	if len(byFile) != len(files) {
		t.Errorf("%d dashboard ConfigMaps for %d dashboards", len(byFile), len(files))
	}
	for _, f := range files {
		cm, ok := byFile[filepath.Base(f)]
		if !ok {
			t.Errorf("no ConfigMap holds %s", f)
			continue
		}
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedString(cm.Object, "data", filepath.Base(f))
		if strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
			t.Errorf("ConfigMap %s does not hold %s as it is", cm.GetName(), f)
		}
		var dash map[string]any
		if err := json.Unmarshal([]byte(got), &dash); err != nil || dash["uid"] == nil {
			t.Errorf("ConfigMap %s: not a dashboard (%v)", cm.GetName(), err)
		}
		if cm.GetLabels()["grafana_dashboard"] != "1" || cm.GetNamespace() != "monitoring" || cm.GetAnnotations()["grafana_folder"] != "tenon" {
			t.Errorf("ConfigMap %s: labels %v, annotations %v, namespace %s", cm.GetName(), cm.GetLabels(), cm.GetAnnotations(), cm.GetNamespace())
		}
	}
	// A sidecar configured with another label finds them under it.
	objs = objects(t, mustRender(t, "tenon", map[string]any{"dashboards": map[string]any{"enabled": true, "label": "dashboards", "labelValue": "tenon"}}))
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && (o.GetLabels()["dashboards"] != "tenon" || o.GetNamespace() != releaseNamespace) {
			t.Errorf("ConfigMap %s: labels %v in %s", o.GetName(), o.GetLabels(), o.GetNamespace())
		}
	}
}
