package controlplane

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVersionsMatchBuildScript keeps the versions naming the cache directory in step with
// hack/build-controlplane.sh.
func TestVersionsMatchBuildScript(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "hack", "build-controlplane.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"K8S_VERSION": KubernetesVersion, "ETCD_VERSION": EtcdVersion, "KWOK_VERSION": KwokVersion} {
		m := regexp.MustCompile(name + `=\$\{` + name + `:-([^}]+)\}`).FindSubmatch(script)
		if m == nil {
			t.Errorf("hack/build-controlplane.sh does not set %s", name)
		} else if string(m[1]) != want {
			t.Errorf("hack/build-controlplane.sh builds %s=%s, the package expects %s", name, m[1], want)
		}
	}
}

func TestBinDirMissing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(BinDirEnv, dir)
	_, err := BinDir()
	if !errors.Is(err, ErrBinariesMissing) || !strings.Contains(err.Error(), "hack/build-controlplane.sh") {
		t.Fatalf("BinDir() error = %v, want ErrBinariesMissing telling to run hack/build-controlplane.sh", err)
	}
	if !strings.Contains(err.Error(), "kube-apiserver") {
		t.Errorf("error does not name the missing binaries: %v", err)
	}
}

func TestDefaultBinDirFollowsScript(t *testing.T) {
	t.Setenv(BinDirEnv, "")
	t.Setenv("TENON_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	got, err := defaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	want := "/xdg/tenon/controlplane/k8s-" + KubernetesVersion + "_etcd-" + EtcdVersion + "_kwok-" + KwokVersion + "/bin"
	if got != want {
		t.Errorf("defaultBinDir() = %s, want %s", got, want)
	}
	t.Setenv("TENON_CACHE_DIR", "/cache")
	if got, _ := defaultBinDir(); !strings.HasPrefix(got, "/cache/controlplane/") {
		t.Errorf("TENON_CACHE_DIR ignored: %s", got)
	}
	t.Setenv(BinDirEnv, "/bins")
	if got, _ := defaultBinDir(); got != "/bins" {
		t.Errorf("%s ignored: %s", BinDirEnv, got)
	}
}
