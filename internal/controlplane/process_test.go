package controlplane

import (
	"bytes"
	"slices"
	"testing"
)

func TestMergeArgs(t *testing.T) {
	got := mergeArgs([]string{"--a=1", "--b=2", "--flag"}, []string{"--b=3", "--flag=false", "--c"})
	want := []string{"--a=1", "--b=3", "--flag=false", "--c"}
	if !slices.Equal(got, want) {
		t.Errorf("mergeArgs = %v, want %v", got, want)
	}
	// Feature gates add up, the extra ones last (a later setting of a gate wins).
	got = mergeArgs([]string{"--feature-gates=GenericWorkload=true", "--a=1"}, []string{"--feature-gates=WatchList=false,GenericWorkload=false"})
	want = []string{"--a=1", "--feature-gates=GenericWorkload=true,WatchList=false,GenericWorkload=false"}
	if !slices.Equal(got, want) {
		t.Errorf("mergeArgs = %v, want %v", got, want)
	}
}

func TestLineWriterPrefixesWholeLines(t *testing.T) {
	var out bytes.Buffer
	w := &lineWriter{w: &out, prefix: "[x] "}
	for _, s := range []string{"one\ntw", "o\n", "three"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	w.flush()
	if want := "[x] one\n[x] two\n[x] three\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
