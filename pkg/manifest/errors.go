package manifest

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Source is where an object was read.
type Source struct {
	// File is the path given to Load, or "<stdin>".
	File string
	// Document is the 1-based index of the document in the file, counting only documents that
	// hold something; 0 when the error is about the whole file.
	Document int
	// Item is the 1-based index of the object in a List; 0 outside a List.
	Item int
	// Line is the 1-based line of the file where the object starts; 0 when unknown.
	Line int
}

// String returns "file:line: document N, item M", leaving out what is unknown.
func (s Source) String() string {
	var b strings.Builder
	b.WriteString(s.File)
	if s.Line > 0 {
		fmt.Fprintf(&b, ":%d", s.Line)
	}
	if s.Document > 0 {
		fmt.Fprintf(&b, ": document %d", s.Document)
	}
	if s.Item > 0 {
		fmt.Fprintf(&b, ", item %d", s.Item)
	}
	return b.String()
}

// Error is one problem in the manifests. Its Line is that of the offending field when it can
// be found, else that of the object.
type Error struct {
	Source
	// Kind, Namespace and Name identify the object, as far as they are known.
	Kind, Namespace, Name string
	Err                   error
}

// Error returns "file:line: document N (Kind namespace/name): message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source.String())
	if id := objectID(e.Kind, e.Namespace, e.Name); id != "" {
		fmt.Fprintf(&b, " (%s)", id)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func objectID(kind, namespace, name string) string {
	switch {
	case name == "":
		return kind
	case namespace == "":
		return strings.TrimSpace(kind + " " + name)
	default:
		return strings.TrimSpace(kind + " " + namespace + "/" + name)
	}
}

// ErrorList is every problem Load found, in the order of the manifests.
type ErrorList []*Error

// Error returns one error per line.
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, err := range l {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, err := range l {
		errs[i] = err
	}
	return errs
}

// fieldMessage is the message of a field error without the noise the CRD validator adds to
// errors that have no field ("<nil>: Invalid value: null: unknown field ...").
func fieldMessage(fe *field.Error) string {
	if (fe.Field == "" || fe.Field == "<nil>") && fe.Type == field.ErrorTypeInvalid && fe.BadValue == nil {
		return fe.Detail
	}
	return fe.Error()
}

var quotedFieldRE = regexp.MustCompile(`(?:unknown|duplicate) field "([^"]+)"`)
var goStructFieldRE = regexp.MustCompile(`into Go struct field [A-Za-z0-9_]+\.(\S+) of type`)

// errorPath returns the field path an error is about: the field of a field error, or the path
// quoted in a strict decoding or type error.
func errorPath(err error) string {
	if fe, ok := err.(*field.Error); ok && fe.Field != "" && fe.Field != "<nil>" {
		return fe.Field
	}
	if m := quotedFieldRE.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	if m := goStructFieldRE.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return ""
}
