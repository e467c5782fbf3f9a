package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/manifest"
)

// FuzzLoad reads arbitrary bytes as one YAML file. Whatever the input, Parse returns a Set or
// an ErrorList whose errors name the file, and a Set expands without panicking.
func FuzzLoad(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("---\n--- {kind: List, apiVersion: v1, items: [7, {kind: Pod}]}\n...\n"))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {generateName: a-}\nspec: {containers: [{name: a, image: a, resources: {limits: {cpu: 1e400}}}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := manifest.Parse("fuzz.yaml", data)
		if err != nil {
			var list manifest.ErrorList
			if set != nil || !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse returned %v and %T %v", set, err, err)
			}
			for _, e := range list {
				if e.File != "fuzz.yaml" || !strings.HasPrefix(e.Error(), "fuzz.yaml") {
					t.Fatalf("error does not name the file: %v", e)
				}
			}
			return
		}
		if set.PodCount() <= 1000 {
			if pods := set.Pods(); len(pods) != set.PodCount() {
				t.Fatalf("%d pods, PodCount %d", len(pods), set.PodCount())
			}
		}
		for _, ds := range set.DaemonSets {
			set.DaemonSetPod(ds)
		}
	})
}
