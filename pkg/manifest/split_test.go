package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitYAML(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []chunk
	}{
		{"one document", "a: 1\n", []chunk{{text: []byte("a: 1\n"), line: 1}}},
		{"leading separator", "---\na: 1\n", []chunk{{line: 1}, {text: []byte("   \na: 1\n"), line: 1}}},
		{"two documents", "a: 1\n---\nb: 2", []chunk{{text: []byte("a: 1\n"), line: 1}, {text: []byte("   \nb: 2"), line: 2}}},
		{"content after the separator", "a: 1\n--- {b: 2}\n", []chunk{{text: []byte("a: 1\n"), line: 1}, {text: []byte("    {b: 2}\n"), line: 2}}},
		{"CRLF and a comment", "a: 1\r\n--- # next\r\nb: 2\r\n", []chunk{{text: []byte("a: 1\r\n"), line: 1}, {text: []byte("    # next\r\nb: 2\r\n"), line: 2}}},
		{"byte order mark", "\xef\xbb\xbfa: 1\n", []chunk{{text: []byte("a: 1\n"), line: 1}}},
		{"not a separator", "a: |\n  ---x\n----\n", []chunk{{text: []byte("a: |\n  ---x\n----\n"), line: 1}}},
	} {
		if got := splitYAML([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: splitYAML(%q) = %+v, want %+v", c.name, c.in, got, c.want)
		}
	}
}

func TestSplitJSON(t *testing.T) {
	chunks := splitJSON([]byte("{\"a\": 1}\n\n  {\"b\":\n 2}\n{\"c\": ,}"))
	if len(chunks) != 3 || chunks[0].line != 1 || chunks[1].line != 3 || string(chunks[1].text) != "{\"b\":\n 2}" || chunks[2].err == nil {
		t.Fatalf("chunks = %+v", chunks)
	}
	if !strings.Contains(chunks[2].err.Error(), "json: line 5: invalid character ','") || chunks[2].line != 5 {
		t.Errorf("syntax error %v at line %d", chunks[2].err, chunks[2].line)
	}
	if got := splitJSON([]byte("{\"a\": ")); len(got) != 1 || got[0].err == nil || !strings.Contains(got[0].err.Error(), "unexpected end") {
		t.Errorf("truncated JSON: %+v", got)
	}
}

func TestSplitPath(t *testing.T) {
	got := splitPath("spec.containers[0].resources.requests[nvidia.com/gpu]")
	want := []string{"spec", "containers", "0", "resources", "requests", "nvidia.com/gpu"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("splitPath = %q", got)
	}
	if got := splitPath("items[2]."); !reflect.DeepEqual(got, []string{"items", "2"}) {
		t.Errorf("splitPath(items[2].) = %q", got)
	}
}

func TestLines(t *testing.T) {
	x := &lineIndex{offset: 10, text: []byte(`# comment
kind: Pod
spec:
  containers:
  - name: a
  - name: b
    ports:
    - containerPort: http
`)}
	for path, want := range map[string]int{
		"":                                    12,
		"spec":                                13,
		"spec.containers[1]":                  16,
		"spec.containers[1].name":             16,
		"spec.containers[1].ports[0]":         18,
		"spec.containers.ports.containerPort": 18, // no indexes: the item that has the path
		"spec.containers[1].missing":          16,
		"spec.containers[7]":                  14,
		"nothing":                             12,
	} {
		if got := x.line(path); got != want {
			t.Errorf("line(%q) = %d, want %d", path, got, want)
		}
	}
	if got := (&lineIndex{text: []byte("a: [")}).line("a"); got != 0 {
		t.Errorf("line in an unparsable document = %d", got)
	}
}

func TestYAMLErrorLines(t *testing.T) {
	line, err := yamlError(errString("yaml: line 3: mapping values are not allowed"), 10)
	if line != 12 || err.Error() != "yaml: line 12: mapping values are not allowed" {
		t.Errorf("yamlError = %d, %v", line, err)
	}
	if line, _ := yamlError(errString("yaml: found character that cannot start any token"), 4); line != 4 {
		t.Errorf("an error without a line is put at the document: %d", line)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestStdin(t *testing.T) {
	saved := stdin
	defer func() { stdin = saved }()
	stdin = strings.NewReader(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}}`)
	set, err := Load("-")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Namespaces) != 2 || set.Objects[1].Source.String() != "<stdin>:2: document 2" {
		t.Errorf("stdin: %d namespaces, second at %s", len(set.Namespaces), set.Objects[1].Source)
	}
	if _, err := Load("-", "-"); err == nil || !strings.Contains(err.Error(), "standard input given twice") {
		t.Errorf("reading stdin twice: %v", err)
	}
}
