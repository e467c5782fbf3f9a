// Package version holds the version and commit tenon was built from. The build sets them with
//
//	-ldflags "-X github.com/tenon-sh/tenon/internal/version.Version=v0.3.0 -X github.com/tenon-sh/tenon/internal/version.Commit=abc123"
//
// (make image does). A plain `go build` or `go install` leaves them empty; Get then falls back
// to what the Go toolchain stamped into the binary: the module version and the VCS revision.
package version

import "runtime/debug"

// Set by -ldflags -X at build time; empty otherwise.
var (
	Version string
	Commit  string
)

// Info is what `tenon version` prints.
type Info struct {
	Version string
	Commit  string
	// Modified is true when the toolchain recorded uncommitted changes in the build's checkout.
	Modified bool
}

// Get returns the version and commit: the ldflags values where set, otherwise the build info's
// main module version and vcs.revision, otherwise "(devel)" and "unknown".
func Get() Info {
	info, _ := debug.ReadBuildInfo()
	return resolve(Version, Commit, info)
}

func resolve(version, commit string, info *debug.BuildInfo) Info {
	out := Info{Version: version, Commit: commit}
	if info != nil {
		if out.Version == "" && info.Main.Version != "" {
			out.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if out.Commit == "" {
					out.Commit = s.Value
				}
			case "vcs.modified":
				// Only trust the toolchain's flag for the commit it recorded itself.
				if commit == "" {
					out.Modified = s.Value == "true"
				}
			}
		}
	}
	if out.Version == "" {
		out.Version = "(devel)"
	}
	if out.Commit == "" {
		out.Commit = "unknown"
	}
	return out
}

// String is the one line `tenon version` prints, e.g. "tenon v0.3.0 (commit abc123)".
func (i Info) String() string {
	s := "tenon " + i.Version + " (commit " + i.Commit
	if i.Modified {
		s += ", modified"
	}
	return s + ")"
}
