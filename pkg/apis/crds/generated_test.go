package crds_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

// TestGeneratedFilesAreCurrent regenerates the deepcopy code and the CRDs into a temporary
// directory with hack/generate.sh and fails if they differ from the committed files. The first
// run builds controller-gen, which takes a while.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for _, tool := range []string{"go", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to regenerate the API files: %v", tool, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readInputs(t, root)

	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "hack", "generate.sh"), out)
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/generate.sh failed: %v\n%s", err, output)
	}

	committed, regenerated := generatedFiles(t, root), generatedFiles(t, out)
	for _, rel := range union(committed, regenerated) {
		want, inNew := regenerated[rel]
		got, inRepo := committed[rel]
		switch {
		case !inNew:
			t.Errorf("%s is no longer generated: delete it or run hack/generate.sh", rel)
		case !inRepo:
			t.Errorf("%s is missing: run hack/generate.sh", rel)
		case !bytes.Equal(got, want):
			diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
				A: difflib.SplitLines(string(got)), B: difflib.SplitLines(string(want)),
				FromFile: "committed/" + rel, ToFile: "regenerated/" + rel, Context: 2,
			})
			t.Errorf("%s is stale: run hack/generate.sh\n%s", rel, diff)
		}
	}
	if len(committed) == 0 {
		t.Error("found no generated files in the repository")
	}
}

// generatedFiles returns the generated files under dir's pkg/apis, keyed by relative path.
func generatedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	apis := filepath.Join(dir, "pkg", "apis")
	err := filepath.WalkDir(apis, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		isCRD := filepath.Dir(rel) == filepath.Join("pkg", "apis", "crds") && strings.HasSuffix(rel, ".yaml")
		if d.Name() == "zz_generated.deepcopy.go" || isCRD {
			b, err := os.ReadFile(path)
			files[filepath.ToSlash(rel)] = b
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// readInputs reads every input of the generator in this process, so that go test's cache
// notices when a type or marker changes: the generator's own reads happen in a subprocess,
// which the cache does not see.
func readInputs(t *testing.T, root string) {
	t.Helper()
	for _, dir := range []string{filepath.Join(root, "pkg", "apis"), filepath.Join(root, "hack")} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			_, err = os.ReadFile(path)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, err := os.ReadFile(filepath.Join(root, f)); err != nil {
			t.Fatal(err)
		}
	}
}

func union(a, b map[string][]byte) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
