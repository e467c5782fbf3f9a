package charts_test

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Where the charts are rendered into, as `helm install tenon charts/tenon -n tenon-system` would.
const (
	releaseName      = "tenon"
	releaseNamespace = "tenon-system"
)

func loadChart(t testing.TB, name string) *chartv2.Chart {
	t.Helper()
	ch, err := loader.Load(name)
	if err != nil {
		t.Fatalf("loading chart %s: %v", name, err)
	}
	return ch
}

// render renders chart dir with values as Helm install does: values coalesced over the
// chart's, checked against values.schema.json, templates rendered. It returns the rendered
// manifests by template path, the NOTES left out.
func render(t testing.TB, dir string, values map[string]any) (map[string]string, error) {
	t.Helper()
	ch := loadChart(t, dir)
	vals, err := util.ToRenderValues(ch, values, common.ReleaseOptions{Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true}, nil)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	for name := range out {
		if strings.HasSuffix(name, "NOTES.txt") || strings.TrimSpace(out[name]) == "" {
			delete(out, name)
		}
	}
	return out, nil
}

// mustRender renders or fails.
func mustRender(t testing.TB, dir string, values map[string]any) map[string]string {
	t.Helper()
	out, err := render(t, dir, values)
	if err != nil {
		t.Fatalf("rendering %s: %v", dir, err)
	}
	return out
}

// objects splits rendered manifests into objects, in template path order.
func objects(t testing.TB, rendered map[string]string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		for _, doc := range strings.Split(rendered[name], "\n---") {
			if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := yaml.UnmarshalStrict([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
	}
	return objs
}

// find returns the one rendered object of kind, failing when there is not exactly one.
func find(t testing.TB, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s, rendered %d", kind, len(found))
	}
	return found[0]
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./charts -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rendered manifests differ from %s (review, then go test ./charts -run %s -update):\n%s", path, t.Name(), lineDiff(string(want), string(got)))
	}
}

// lineDiff is a unified diff of want and got, for a failure message.
func lineDiff(want, got string) string {
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(want), B: difflib.SplitLines(got), FromFile: "golden", ToFile: "rendered", Context: 2,
	})
	return d
}
