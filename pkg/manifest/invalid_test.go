package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-sh/tenon/pkg/manifest"
)

// wants returns the substrings the error of a bad manifest must contain: its "# want: "
// lines, or the lines of a .want file beside it (JSON has no comments).
func wants(t *testing.T, path string) []string {
	t.Helper()
	var lines []string
	if b, err := os.ReadFile(path + ".want"); err == nil {
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
	} else {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if want, ok := strings.CutPrefix(line, "# want: "); ok {
				lines = append(lines, want)
			}
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s: no expected error", path)
	}
	return lines
}

func TestInvalidManifests(t *testing.T) {
	paths, err := filepath.Glob("testdata/invalid/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range paths {
		if strings.HasSuffix(path, ".want") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			set, err := manifest.Load(path)
			if err == nil {
				t.Fatalf("loaded %d objects; want an error", len(set.Objects))
			}
			if set != nil {
				t.Error("Load returned a Set with its error")
			}
			var list manifest.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %T is not a manifest.ErrorList", err)
			}
			// Errors name the file as given, relative to the test's directory.
			msg := strings.ReplaceAll(err.Error(), "testdata/invalid/", "")
			for _, want := range wants(t, path) {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not contain\n  %s\ngot\n  %s", want, msg)
				}
			}
		})
	}
	if n < 15 {
		t.Errorf("%d invalid manifests; want at least 15", n)
	}
}
