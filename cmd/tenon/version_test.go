package main

import (
	"bytes"
	"testing"

	"github.com/tenon-sh/tenon/internal/version"
)

func TestVersionCommandPrintsVersionAndCommit(t *testing.T) {
	old, oldC := version.Version, version.Commit
	t.Cleanup(func() { version.Version, version.Commit = old, oldC })
	version.Version, version.Commit = "v0.4.0", "0123abcd"

	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "tenon v0.4.0 (commit 0123abcd)\n"; got != want {
		t.Fatalf("tenon version printed %q, want %q", got, want)
	}
}
