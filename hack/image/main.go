// Command image assembles tenon's container image without a Docker engine or a base image: for
// each platform it cross-compiles the static tenon binary and lays it, with a CA bundle and a
// non-root user, on an empty base, then writes the images as one multi-arch index into an OCI
// image layout. `make image` runs it; pushing the layout (crane, skopeo) is the user's step, see
// docs/install.md.
//
// Nothing in the image is writable by the user it runs as (uid/gid 65532, "nonroot"), and
// nothing needs to be: the pod is meant to run with readOnlyRootFilesystem: true.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	versionPkg = "github.com/tenon-sh/tenon/internal/version"
	// NonRoot is the uid and gid the image runs as; 65532 is distroless's "nonroot".
	NonRoot    = 65532
	binaryPath = "tenon"
)

// Options are the command's flags.
type Options struct {
	Out       string   // the OCI layout directory to write (replaced if it is one already)
	Platforms []string // os/arch pairs, e.g. linux/amd64
	Version   string
	Commit    string
	Source    string // org.opencontainers.image.source
	Pkg       string // the main package to build into /tenon
	CABundle  string // the CA bundle to copy to /etc/ssl/certs/ca-certificates.crt
	Created   time.Time
}

func main() {
	var o Options
	var platforms string
	flag.StringVar(&o.Out, "out", "_output/image", "OCI image layout directory to write")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	flag.StringVar(&o.Version, "version", "", "version stamped into the binary and the labels (required)")
	flag.StringVar(&o.Commit, "commit", "", "commit stamped into the binary and the labels (required)")
	flag.StringVar(&o.Source, "source", "https://github.com/tenon-sh/tenon", "org.opencontainers.image.source label")
	flag.StringVar(&o.Pkg, "pkg", "./cmd/tenon", "main package built into /tenon")
	flag.StringVar(&o.CABundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied into the image")
	flag.Parse()
	o.Platforms = strings.Split(platforms, ",")
	o.Created = time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fail(fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err))
		}
		o.Created = time.Unix(sec, 0).UTC()
	}
	if err := Build(o); err != nil {
		fail(err)
	}
	fmt.Printf("wrote %s (%s) for %s; run it with readOnlyRootFilesystem: true as uid %d (docs/install.md)\n",
		o.Out, o.Version, strings.Join(o.Platforms, ", "), NonRoot)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}

// Build compiles the binary for every platform and writes the multi-arch index to o.Out.
func Build(o Options) error {
	if o.Version == "" || o.Commit == "" {
		return errors.New("-version and -commit are required")
	}
	if len(o.Platforms) == 0 {
		return errors.New("no platforms given")
	}
	ca, err := os.ReadFile(o.CABundle)
	if err != nil {
		return fmt.Errorf("reading the CA bundle (on Debian: apt-get install ca-certificates, or pass -ca-bundle): %w", err)
	}
	if !bytes.Contains(ca, []byte("BEGIN CERTIFICATE")) {
		return fmt.Errorf("CA bundle %s holds no PEM certificate", o.CABundle)
	}
	base, err := baseLayer(ca, o.Created)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "tenon-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	labels := map[string]string{
		"org.opencontainers.image.source":   o.Source,
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.revision": o.Commit,
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range o.Platforms {
		plat, err := v1.ParsePlatform(strings.TrimSpace(p))
		if err != nil || plat.OS == "" || plat.Architecture == "" {
			return fmt.Errorf("platform %q: want os/arch, e.g. linux/amd64", p)
		}
		bin := filepath.Join(work, plat.OS+"-"+plat.Architecture)
		if err := compile(o, plat, bin); err != nil {
			return err
		}
		img, err := image(base, bin, plat, labels, o.Created)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: plat},
		})
	}
	idx = mutate.Annotations(idx, labels).(v1.ImageIndex)
	return writeLayout(o.Out, idx, o.Version)
}

// compile builds a static binary for plat with the version and commit stamped in.
func compile(o Options, plat *v1.Platform, out string) error {
	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Commit=%s", versionPkg, o.Version, versionPkg, o.Commit)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, o.Pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+plat.OS, "GOARCH="+plat.Architecture)
	if plat.Variant != "" && plat.Architecture == "arm" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(plat.Variant, "v"))
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s for %s/%s: %w", o.Pkg, plat.OS, plat.Architecture, err)
	}
	return nil
}

// baseLayer is what every platform shares: the CA bundle and the user database. Everything is
// owned by root and read-only to everyone else.
func baseLayer(ca []byte, mtime time.Time) (v1.Layer, error) {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("nonroot:x:%d:%d:nonroot:/nonexistent:/sbin/nologin\n", NonRoot, NonRoot)
	group := "root:x:0:\n" + fmt.Sprintf("nonroot:x:%d:\n", NonRoot)
	return layer(mtime,
		entry{name: "etc/", mode: 0o755},
		entry{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		entry{name: "etc/group", mode: 0o644, data: []byte(group)},
		entry{name: "etc/ssl/", mode: 0o755},
		entry{name: "etc/ssl/certs/", mode: 0o755},
		entry{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: ca},
	)
}

func image(base v1.Layer, bin string, plat *v1.Platform, labels map[string]string, created time.Time) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	app, err := layer(created, entry{name: binaryPath, mode: 0o755, data: data})
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, base, app)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
	cf.Created = v1.Time{Time: created}
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", NonRoot, NonRoot),
		Entrypoint: []string{"/" + binaryPath},
		Cmd:        []string{"controller"},
		WorkingDir: "/",
		Labels:     labels,
		Env:        []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
	}
	return mutate.ConfigFile(img, cf)
}

type entry struct {
	name string // a trailing slash makes it a directory
	mode int64
	data []byte
}

// layer writes a reproducible tar (fixed times, root ownership, no user names) as an OCI layer.
func layer(mtime time.Time, entries ...entry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: mtime, Format: tar.FormatPAX}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// writeLayout replaces dir with a fresh OCI layout holding idx, tagged ref (the
// org.opencontainers.image.ref.name skopeo's oci:DIR:REF reads). It refuses to delete a
// non-empty directory that is not an OCI layout.
func writeLayout(dir string, idx v1.ImageIndex, ref string) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("%s exists and is not an OCI layout; not overwriting it", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref,
	}))
}
