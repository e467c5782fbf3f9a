package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// StdinName is the file name errors give to standard input.
const StdinName = "<stdin>"

// stdin is read for the path "-"; tests replace it.
var stdin io.Reader = os.Stdin

// Load reads the manifests at paths: files of any name, directories (every .yaml, .yml and
// .json file in them, in lexical order, skipping names that begin with a dot; not the
// directories below, as kubectl's -f without -R), and "-" for standard input. It returns every
// object in a Set, or, if anything is wrong, no Set and an ErrorList with every problem found.
func Load(paths ...string) (*Set, error) { return LoadWith(LoadOptions{}, paths...) }

// LoadOptions changes how LoadWith reads directories.
type LoadOptions struct {
	// Recursive reads the manifest files of every directory below a directory given, too
	// (kubectl's -R).
	Recursive bool
}

// LoadWith is Load with options.
func LoadWith(o LoadOptions, paths ...string) (*Set, error) {
	if len(paths) == 0 {
		return nil, errors.New("manifest: no files given")
	}
	l := newLoader()
	readStdin := false
	for _, path := range paths {
		if path == "-" {
			if readStdin {
				l.errs = append(l.errs, &Error{Source: Source{File: StdinName}, Err: errors.New("standard input given twice")})
				continue
			}
			readStdin = true
			data, err := io.ReadAll(stdin)
			if err != nil {
				l.errs = append(l.errs, &Error{Source: Source{File: StdinName}, Err: err})
				continue
			}
			l.file(StdinName, data, bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")))
			continue
		}
		files, err := manifestFiles(path, o.Recursive)
		if err != nil {
			l.errs = append(l.errs, &Error{Source: Source{File: path}, Err: err})
			continue
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				l.errs = append(l.errs, &Error{Source: Source{File: f}, Err: err})
				continue
			}
			l.file(f, data, isJSONFile(f))
		}
	}
	return l.finish()
}

// Parse reads the content of one manifest file as Load does; name appears in errors and
// decides the format: a stream of JSON values if it ends in .json, else YAML documents (each
// of which may be JSON).
func Parse(name string, data []byte) (*Set, error) {
	l := newLoader()
	l.file(name, data, isJSONFile(name))
	return l.finish()
}

func isJSONFile(name string) bool { return strings.EqualFold(filepath.Ext(name), ".json") }

func manifestExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// manifestFiles returns path if it is a file, or the manifest files in it (below it too, if
// recursive) if it is a directory.
func manifestFiles(path string, recursive bool) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files, subdirs []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p != path && strings.HasPrefix(d.Name(), "."):
			if d.IsDir() {
				return filepath.SkipDir
			}
		case p != path && d.IsDir():
			if !recursive {
				subdirs = append(subdirs, p)
				return filepath.SkipDir
			}
		case !d.IsDir() && manifestExt(p):
			files = append(files, p)
		}
		return nil
	})
	if err == nil && len(files) == 0 {
		err = errors.New("no .yaml, .yml or .json files in the directory")
		if len(subdirs) > 0 {
			err = fmt.Errorf("no .yaml, .yml or .json files in the directory; its subdirectories (%s) are read only with -R (--recursive)", strings.Join(subdirs, ", "))
		}
	}
	return files, err
}

// file reads the documents of one file.
func (l *loader) file(name string, data []byte, isJSON bool) {
	var chunks []chunk
	if isJSON {
		chunks = splitJSON(data)
	} else {
		chunks = splitYAML(data)
	}
	doc := 0
	for _, c := range chunks {
		src := Source{File: name, Document: doc + 1, Line: c.line}
		if c.err != nil {
			doc++
			l.errs = append(l.errs, &Error{Source: src, Err: c.err})
			continue
		}
		j, err := yaml.YAMLToJSONStrict(c.text)
		if err != nil {
			doc++
			src.Line, err = yamlError(err, c.line)
			l.errs = append(l.errs, &Error{Source: src, Err: err})
			continue
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			continue // only comments, or nothing
		}
		doc++
		var v interface{}
		if err := utiljson.Unmarshal(j, &v); err != nil {
			l.errs = append(l.errs, &Error{Source: src, Err: err})
			continue
		}
		lines := &lineIndex{text: c.text, offset: c.line - 1}
		if n := lines.line(""); n > 0 {
			src.Line = n
		}
		m, ok := v.(map[string]interface{})
		if !ok {
			l.errs = append(l.errs, &Error{Source: src, Err: fmt.Errorf("a document must be an object, not %s", jsonType(v))})
			continue
		}
		l.object(place{src: src, lines: lines, obj: m}, false)
	}
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlError rewrites the line numbers of a YAML error, which count from the start of the
// document, to count from the start of the file, and returns the first.
func yamlError(err error, first int) (int, error) {
	line := 0
	msg := yamlLineRE.ReplaceAllStringFunc(err.Error(), func(s string) string {
		n, convErr := strconv.Atoi(strings.TrimPrefix(s, "line "))
		if convErr != nil {
			return s
		}
		n += first - 1
		if line == 0 {
			line = n
		}
		return "line " + strconv.Itoa(n)
	})
	if line == 0 {
		line = first
	}
	// One error, one line: "unmarshal errors:\n  line 7: ..." becomes "unmarshal errors: line 7: ...".
	return line, errors.New(strings.Join(strings.Fields(msg), " "))
}

func jsonType(v interface{}) string {
	switch v.(type) {
	case []interface{}:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}
