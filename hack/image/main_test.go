package main

import (
	"archive/tar"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// TestImageLayoutIsRunnableAsNonRoot builds the image for linux/amd64 (with a stand-in binary,
// so the test stays quick; `make image` builds the real tenon) and inspects what a registry
// and a kubelet would see.
func TestImageLayoutIsRunnableAsNonRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles a binary")
	}
	out := filepath.Join(t.TempDir(), "layout")
	err := Build(Options{
		Out:       out,
		Platforms: []string{"linux/amd64"},
		Version:   "v0.0.0-test",
		Commit:    "c0ffee",
		Source:    "https://github.com/tenon-sh/tenon",
		Pkg:       "./testdata/standin",
		CABundle:  "/etc/ssl/certs/ca-certificates.crt",
		Created:   time.Unix(0, 0).UTC(),
	})
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("no CA bundle on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}

	p, err := layout.FromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	topm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topm.Manifests) != 1 || topm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v0.0.0-test" {
		t.Fatalf("layout index = %+v, want one index tagged v0.0.0-test", topm.Manifests)
	}
	idx, err := top.ImageIndex(topm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Platform == nil ||
		im.Manifests[0].Platform.OS != "linux" || im.Manifests[0].Platform.Architecture != "amd64" {
		t.Fatalf("index manifests = %+v, want exactly linux/amd64", im.Manifests)
	}
	// Every blob's digest and size match what the manifests say, and each image's config
	// names the platform the index lists it under.
	if err := validate.Index(idx); err != nil {
		t.Fatalf("the index is not valid: %v", err)
	}
	pushAndPull(t, idx)
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("User = %q, want 65532:65532 (non-root)", c.User)
	}
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/tenon" || len(c.Cmd) != 1 || c.Cmd[0] != "controller" || c.WorkingDir != "/" {
		t.Errorf("Entrypoint %q Cmd %q WorkingDir %q, want [/tenon] [controller] /", c.Entrypoint, c.Cmd, c.WorkingDir)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/tenon-sh/tenon",
		"org.opencontainers.image.version":  "v0.0.0-test",
		"org.opencontainers.image.revision": "c0ffee",
	} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}

	files := flatten(t, img)
	entry, ok := files["tenon"]
	if !ok || entry.Typeflag != tar.TypeReg || entry.Mode&0o111 == 0 {
		t.Fatalf("entrypoint /tenon: %+v, want an executable regular file", entry)
	}
	for _, name := range []string{"etc/ssl/certs/ca-certificates.crt", "etc/passwd", "etc/group"} {
		if _, ok := files[name]; !ok {
			t.Errorf("%s is missing from the image", name)
		}
	}
	if !strings.Contains(string(files["etc/passwd"].data), "nonroot:x:65532:65532:") ||
		!strings.Contains(string(files["etc/group"].data), "nonroot:x:65532:") {
		t.Errorf("passwd/group lack the nonroot user:\n%s\n%s", files["etc/passwd"].data, files["etc/group"].data)
	}
	for name, f := range files {
		// Root owns everything, and uid/gid 65532 can write nothing: the pod runs with a
		// read-only root filesystem and nothing in the image needs writing.
		if f.Uid != 0 || f.Gid != 0 {
			t.Errorf("%s owned by %d:%d, want 0:0", name, f.Uid, f.Gid)
		}
		if f.Mode&0o022 != 0 {
			t.Errorf("%s has mode %o: group or others (the non-root user) may write it", name, f.Mode)
		}
	}

	// The binary is the one built for the platform, with the version and commit stamped in.
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		bin := filepath.Join(t.TempDir(), "tenon")
		if err := os.WriteFile(bin, entry.data, 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		if want := "tenon v0.0.0-test (commit c0ffee)\n"; string(got) != want {
			t.Errorf("the image's binary prints %q, want %q", got, want)
		}
	}
}

// pushAndPull pushes idx to a registry, as `crane push` does the layout's one entry, and reads
// it back by tag: the digest must survive.
func pushAndPull(t *testing.T, idx v1.ImageIndex) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/tenon:v0.0.0-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatalf("push: %v", err)
	}
	got, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("pull: %v", err)
	}
	want, _ := idx.Digest()
	if d, _ := got.Digest(); d != want {
		t.Fatalf("pushed %s, registry serves %s", want, d)
	}
}

func TestImageRefusesMissingCABundle(t *testing.T) {
	err := Build(Options{
		Out: t.TempDir(), Platforms: []string{"linux/amd64"}, Version: "v0", Commit: "c",
		Pkg: "./testdata/standin", CABundle: filepath.Join(t.TempDir(), "absent.crt"),
	})
	if err == nil || !strings.Contains(err.Error(), "CA bundle") {
		t.Fatalf("Build with no CA bundle: err = %v, want one naming the CA bundle", err)
	}
}

func TestImageRefusesToOverwriteANonLayoutDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeLayout(dir, nil, "v0"); err == nil || !strings.Contains(err.Error(), "not an OCI layout") {
		t.Fatalf("writeLayout over a plain directory: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "precious")); err != nil {
		t.Fatalf("the directory's file was removed: %v", err)
	}
}

type file struct {
	*tar.Header
	data []byte
}

// flatten reads every layer in order, later layers overwriting earlier ones (the image has no
// whiteouts), so a file's ownership and mode are checked in each layer it appears in.
func flatten(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]file{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(strings.TrimPrefix(h.Name, "/"), "/")
			if prev, ok := files[name]; ok && (prev.Uid != 0 || prev.Mode&0o022 != 0) {
				files[name+" (lower layer)"] = prev
			}
			files[name] = file{h, data}
		}
		rc.Close()
	}
	return files
}

// TestImageIsReproducible: the same source, version and commit give the same index digest, so
// a rebuild of a release can be checked against the pushed image.
func TestImageIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles a binary")
	}
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		t.Skipf("no CA bundle on this machine: %v", err)
	}
	var digests []v1.Hash
	for range 2 {
		out := filepath.Join(t.TempDir(), "layout")
		if err := Build(Options{
			Out: out, Platforms: []string{"linux/amd64"}, Version: "v0.0.0-test", Commit: "c0ffee",
			Pkg: "./testdata/standin", CABundle: "/etc/ssl/certs/ca-certificates.crt", Created: time.Unix(0, 0).UTC(),
		}); err != nil {
			t.Fatal(err)
		}
		idx, err := layout.ImageIndexFromPath(out)
		if err != nil {
			t.Fatal(err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, m.Manifests[0].Digest)
	}
	if digests[0] != digests[1] {
		t.Fatalf("two builds of the same input differ: %s and %s", digests[0], digests[1])
	}
}
