package version

import (
	"runtime/debug"
	"testing"
)

func buildInfo(mainVersion string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/tenon-sh/tenon", Version: mainVersion}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestLdflagsWinOverBuildInfo(t *testing.T) {
	got := resolve("v1.2.3", "abc123", buildInfo("(devel)", "vcs.revision", "fff000", "vcs.modified", "true"))
	want := Info{Version: "v1.2.3", Commit: "abc123"}
	if got != want {
		t.Fatalf("resolve = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "tenon v1.2.3 (commit abc123)" {
		t.Fatalf("String = %q", s)
	}
}

func TestFallsBackToVCSRevisionWhenNotSet(t *testing.T) {
	got := resolve("", "", buildInfo("v0.9.0", "vcs.revision", "fff000", "vcs.modified", "true"))
	want := Info{Version: "v0.9.0", Commit: "fff000", Modified: true}
	if got != want {
		t.Fatalf("resolve = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "tenon v0.9.0 (commit fff000, modified)" {
		t.Fatalf("String = %q", s)
	}
}

func TestUnknownWithoutLdflagsOrBuildInfo(t *testing.T) {
	if got, want := resolve("", "", nil), (Info{Version: "(devel)", Commit: "unknown"}); got != want {
		t.Fatalf("resolve(nil) = %+v, want %+v", got, want)
	}
	if got, want := resolve("", "", buildInfo("")), (Info{Version: "(devel)", Commit: "unknown"}); got != want {
		t.Fatalf("resolve(empty) = %+v, want %+v", got, want)
	}
}

func TestGetUsesPackageVariables(t *testing.T) {
	old, oldC := Version, Commit
	t.Cleanup(func() { Version, Commit = old, oldC })
	Version, Commit = "v9.9.9", "deadbeef"
	if got := Get(); got.Version != "v9.9.9" || got.Commit != "deadbeef" {
		t.Fatalf("Get = %+v", got)
	}
}
