package awsapi

import (
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// form is a Query-protocol request's fields: lists are flattened as Name.1, Name.2, ... and
// structures as Name.Member.
type form url.Values

func (f form) get(key string) string { return url.Values(f).Get(key) }

func (f form) has(key string) bool { _, ok := f[key]; return ok }

// strs returns the values of the list prefix.1, prefix.2, ... up to the first missing index.
func (f form) strs(prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		k := prefix + "." + strconv.Itoa(i)
		if !f.has(k) {
			return out
		}
		out = append(out, f.get(k))
	}
}

// sub returns the fields under prefix (prefix.X → X).
func (f form) sub(prefix string) form {
	out := form{}
	p := prefix + "."
	for k, v := range f {
		if rest, ok := strings.CutPrefix(k, p); ok {
			out[rest] = v
		}
	}
	return out
}

// list returns the structures prefix.1, prefix.2, ... in index order.
func (f form) list(prefix string) []form {
	byIndex := map[int]form{}
	p := prefix + "."
	for k, v := range f {
		rest, ok := strings.CutPrefix(k, p)
		if !ok {
			continue
		}
		idx, field, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(idx)
		if !ok || err != nil || n < 1 {
			continue
		}
		if byIndex[n] == nil {
			byIndex[n] = form{}
		}
		byIndex[n][field] = v
	}
	idx := make([]int, 0, len(byIndex))
	for n := range byIndex {
		idx = append(idx, n)
	}
	sort.Ints(idx)
	out := make([]form, len(idx))
	for i, n := range idx {
		out[i] = byIndex[n]
	}
	return out
}

// intField parses an optional integer field.
func (f form) intField(key string, def int) (int, *apiError) {
	v := f.get(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, badRequest("InvalidParameterValue", "Value (%s) for parameter %s is invalid. Expected an integer.", v, key)
	}
	return n, nil
}

// tags returns the Tag (or Tags.member) list of key/value pairs under prefix.
func (f form) tags(prefix string) []tag {
	var out []tag
	for _, t := range f.list(prefix) {
		out = append(out, tag{Key: t.get("Key"), Value: t.get("Value")})
	}
	return out
}

// filter is one EC2 filter: Name and the values any of which may match.
type filter struct {
	name   string
	values []string
}

func parseFilters(f form) []filter {
	var out []filter
	for _, sf := range f.list("Filter") {
		out = append(out, filter{name: sf.get("Name"), values: sf.strs("Value")})
	}
	return out
}

// matchFilters reports whether a resource matches every filter. attr returns a resource's
// values for a filter name, and whether the name is a filter the resource type knows; the
// tag:<key> and tag-key filters are answered from tags.
func matchFilters(filters []filter, tags []tag, attr func(name string) ([]string, bool)) (bool, *apiError) {
	for _, flt := range filters {
		var have []string
		switch {
		case strings.HasPrefix(flt.name, "tag:"):
			key := strings.TrimPrefix(flt.name, "tag:")
			for _, t := range tags {
				if t.Key == key {
					have = append(have, t.Value)
				}
			}
		case flt.name == "tag-key":
			for _, t := range tags {
				have = append(have, t.Key)
			}
		default:
			var known bool
			have, known = attr(flt.name)
			if !known {
				return false, badRequest("InvalidParameterValue", "The filter '%s' is invalid", flt.name)
			}
		}
		if !anyMatch(flt.values, have) {
			return false, nil
		}
	}
	return true, nil
}

func anyMatch(patterns, values []string) bool {
	for _, p := range patterns {
		for _, v := range values {
			if glob(p, v) {
				return true
			}
		}
	}
	return false
}

// glob matches EC2 filter wildcards: * is any run of characters, ? any one character.
func glob(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	p, v := []rune(pattern), []rune(s)
	// Iterative matching with backtracking to the last star.
	pi, vi, star, mark := 0, 0, -1, 0
	for vi < len(v) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == v[vi]):
			pi++
			vi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, vi
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			vi = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// page selects the page [start, end) of n items a request asks for with MaxResults and
// NextToken, and the token of the next page ("" when it is the last).
func page(f form, n, lo, hi int) (start, end int, next string, err *apiError) {
	limit, err := f.intField("MaxResults", hi)
	if err != nil {
		return 0, 0, "", err
	}
	if limit < lo || limit > hi {
		return 0, 0, "", badRequest("InvalidParameterValue", "MaxResults must be between %d and %d, not %d", lo, hi, limit)
	}
	if tok := f.get("NextToken"); tok != "" {
		start, err = parseToken(tok)
		if err != nil {
			return 0, 0, "", err
		}
	}
	start = min(start, n)
	end = min(start+limit, n)
	if end < n {
		next = makeToken(end)
	}
	return start, end, next, nil
}

func makeToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(offset)))
}

func parseToken(tok string) (int, *apiError) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), "offset:"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, badRequest("InvalidNextToken", "The token '%s' is invalid", tok)
}

// isoTime formats a time as EC2 and IAM do.
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ec2Header starts every EC2 response: the namespace and the request ID.
type ec2Header struct {
	Xmlns     string `xml:"xmlns,attr"`
	RequestID string `xml:"requestId"`
}

func (h *ec2Header) setRequestID(id string) {
	h.Xmlns = "http://ec2.amazonaws.com/doc/2016-11-15/"
	h.RequestID = id
}

type ec2Response interface{ setRequestID(string) }

// writeXML writes an XML document with status 200.
func writeXML(w http.ResponseWriter, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(b)
}

type ec2ErrorDoc struct {
	XMLName   xml.Name      `xml:"Response"`
	Errors    []ec2ErrorXML `xml:"Errors>Error"`
	RequestID string        `xml:"RequestID"`
}

type ec2ErrorXML struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

func writeEC2Error(w http.ResponseWriter, reqID string, e *apiError) {
	b, _ := xml.Marshal(ec2ErrorDoc{Errors: []ec2ErrorXML{{Code: e.Code, Message: e.Message}}, RequestID: reqID})
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(b)
}

// tag is an EC2 or IAM tag.
type tag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

// withTags returns tags with adds applied: an existing key takes the new value.
func withTags(tags []tag, adds []tag) []tag {
	out := append([]tag(nil), tags...)
	for _, a := range adds {
		replaced := false
		for i := range out {
			if out[i].Key == a.Key {
				out[i].Value, replaced = a.Value, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return out
}
