package catalog

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// scanCSV reads a plain CSV file (a header line, then one record per line; no quoting, which the
// embedded files never need) and calls fn for every record with the fields of the named columns,
// in the order of columns. The slice passed to fn is reused between calls. Blank lines are
// skipped. Errors name the file and line.
func scanCSV(file, data string, columns []string, fn func(fields []string) error) error {
	header, rest, _ := strings.Cut(data, "\n")
	names := strings.Split(strings.TrimSuffix(header, "\r"), ",")
	index := make([]int, len(columns))
	for i, c := range columns {
		index[i] = -1
		for j, n := range names {
			if n == c {
				index[i] = j
				break
			}
		}
		if index[i] < 0 {
			return fmt.Errorf("%s: header has no column %q", file, c)
		}
	}
	all := make([]string, len(names))
	fields := make([]string, len(columns))
	for line := 2; rest != ""; line++ {
		var row string
		row, rest, _ = strings.Cut(rest, "\n")
		row = strings.TrimSuffix(row, "\r")
		if row == "" {
			continue
		}
		if strings.IndexByte(row, '"') >= 0 {
			return fmt.Errorf("%s:%d: quoted fields are not supported", file, line)
		}
		if n := strings.Count(row, ",") + 1; n != len(all) {
			return fmt.Errorf("%s:%d: %d fields, want %d", file, line, n, len(all))
		}
		for j := range all {
			all[j], row, _ = strings.Cut(row, ",")
		}
		for i, j := range index {
			fields[i] = all[j]
		}
		if err := fn(fields); err != nil {
			return fmt.Errorf("%s:%d: %w", file, line, err)
		}
	}
	return nil
}

// fieldParser parses the fields of one record, remembering the first error so that a record can
// be read without an error check per field.
type fieldParser struct {
	columns []string
	err     error
}

func (p *fieldParser) fail(i int, v, what string) {
	if p.err == nil {
		p.err = fmt.Errorf("column %s: %q is not %s", p.columns[i], v, what)
	}
}

// int parses field i as a non-negative integer; blank reads as 0.
func (p *fieldParser) int(f []string, i int) int64 {
	if f[i] == "" {
		return 0
	}
	n, err := strconv.ParseInt(f[i], 10, 64)
	if err != nil || n < 0 {
		p.fail(i, f[i], "a non-negative integer")
		return 0
	}
	return n
}

// float parses field i as a non-negative number; blank reads as 0 and ok false.
func (p *fieldParser) float(f []string, i int) (v float64, ok bool) {
	if f[i] == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[i], 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		p.fail(i, f[i], "a finite non-negative number")
		return 0, false
	}
	return v, true
}

func (p *fieldParser) bool(f []string, i int) bool {
	switch f[i] {
	case "", "false":
		return false
	case "true":
		return true
	}
	p.fail(i, f[i], "true or false")
	return false
}
