package controlplane

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeBinDir holds empty executables named like etcd and kube-apiserver: enough for prepare,
// which only checks that they are there.
func fakeBinDir(t *testing.T) string {
	dir := t.TempDir()
	for _, n := range []string{etcdBin, apiserverBin} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestWorkDirIsPrivateAndRemovedByStop(t *testing.T) {
	c, _, err := prepare(Options{BinDir: fakeBinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	dir := c.WorkDir()
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("work directory %s has mode %o; it holds etcd's data and private keys and must be 0700", dir, m)
	}
	if m := mode(t, filepath.Join(dir, "pki")); m&0o077 != 0 {
		t.Errorf("pki directory has mode %o; want no access for group or others", m)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Stop left the temporary work directory %s behind (%v)", dir, err)
	}
}

func TestGivenWorkDirIsMadePrivateAndKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cp")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c, _, err := prepare(Options{BinDir: fakeBinDir(t), WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("a given work directory of mode 0755 must be made 0700 before keys go in it; it has %o", m)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("Stop must keep a work directory it was given: %v", err)
	}
}
