package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The versions hack/build-controlplane.sh builds. They name the cache directory, so they must
// match the script's defaults (TestVersionsMatchBuildScript checks that they do).
const (
	KubernetesVersion = "v1.37.2"
	EtcdVersion       = "v3.7.3"
	KwokVersion       = "v0.8.0"
)

// BinDirEnv names the environment variable that, when set, is the directory holding the
// control-plane binaries (it overrides the cache directory).
const BinDirEnv = "TENON_CONTROLPLANE_BIN"

// Binary names, as hack/build-controlplane.sh writes them into the bin directory.
const (
	etcdBin              = "etcd"
	apiserverBin         = "kube-apiserver"
	schedulerBin         = "kube-scheduler"
	controllerManagerBin = "kube-controller-manager"
	kubectlBin           = "kubectl"
	kwokBin              = "kwok"
)

// allBinaries is everything hack/build-controlplane.sh builds.
var allBinaries = []string{etcdBin, apiserverBin, schedulerBin, controllerManagerBin, kubectlBin, kwokBin}

// kwokStagesFile is the kwok stage configuration the build script writes next to bin/.
const kwokStagesFile = "kwok-stages.yaml"

// buildHint is appended to every "binaries not found" error.
const buildHint = "run hack/build-controlplane.sh (a cold build takes about 7 minutes) or set " +
	BinDirEnv + " to a directory holding them"

// ErrBinariesMissing is wrapped by every error reporting that the control-plane binaries are
// not where they were looked for.
var ErrBinariesMissing = errors.New("control-plane binaries not found")

// defaultBinDir mirrors hack/build-controlplane.sh --print: $TENON_CONTROLPLANE_BIN if set, else
// ${TENON_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tenon}/controlplane/<versions>/bin.
func defaultBinDir() (string, error) {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d, nil
	}
	root := os.Getenv("TENON_CACHE_DIR")
	if root == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("%w: cannot locate the cache directory (%v); %s", ErrBinariesMissing, err, buildHint)
			}
			cache = filepath.Join(home, ".cache")
		}
		root = filepath.Join(cache, "tenon")
	}
	key := "k8s-" + KubernetesVersion + "_etcd-" + EtcdVersion + "_kwok-" + KwokVersion
	return filepath.Join(root, "controlplane", key, "bin"), nil
}

// BinDir returns the directory holding the control-plane binaries that
// hack/build-controlplane.sh builds: $TENON_CONTROLPLANE_BIN when set, else the versioned cache
// directory the script prints with --print. It fails, with an error wrapping
// ErrBinariesMissing that tells the user to run hack/build-controlplane.sh, unless all six
// binaries (etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubectl, kwok) are
// there and executable.
func BinDir() (string, error) {
	dir, err := defaultBinDir()
	if err != nil {
		return "", err
	}
	if err := checkBinaries(dir, allBinaries); err != nil {
		return "", err
	}
	return dir, nil
}

// checkBinaries reports, as one error wrapping ErrBinariesMissing, which of names are missing
// from dir or not executable.
func checkBinaries(dir string, names []string) error {
	var missing []string
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w in %s (missing: %s): %s", ErrBinariesMissing, dir, strings.Join(missing, ", "), buildHint)
}

// kwokStagesPath returns the kwok stage configuration that belongs to binDir (next to it, as
// the build script writes it), failing with a build hint when it is absent.
func kwokStagesPath(binDir string) (string, error) {
	p := filepath.Join(filepath.Dir(filepath.Clean(binDir)), kwokStagesFile)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: kwok stage configuration %s is absent: %s", ErrBinariesMissing, p, buildHint)
	}
	return p, nil
}
