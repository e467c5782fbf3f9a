package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// chunk is the text of one document of a file.
type chunk struct {
	text []byte
	line int   // 1-based line of the file where text begins
	err  error // a syntax error found while splitting
}

// splitYAML splits a YAML stream at its "---" lines, as kubectl does. A chunk begins on its
// separator line, which keeps in its columns whatever follows "---" ("--- {a: 1}"), so that
// line numbers within a chunk count from the chunk's first line.
func splitYAML(data []byte) []chunk {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var chunks []chunk
	cur := chunk{line: 1}
	line := 1
	for pos := 0; pos < len(data); line++ {
		next := len(data)
		if end := bytes.IndexByte(data[pos:], '\n'); end >= 0 {
			next = pos + end + 1
		}
		text := data[pos:next]
		if isSeparator(text) {
			chunks = append(chunks, cur)
			cur = chunk{text: append([]byte("   "), text[3:]...), line: line}
		} else {
			cur.text = append(cur.text, text...)
		}
		pos = next
	}
	return append(chunks, cur)
}

// isSeparator reports whether a line is "---", alone or followed by a blank.
func isSeparator(line []byte) bool {
	line = bytes.TrimRight(line, "\r\n")
	return bytes.HasPrefix(line, []byte("---")) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t')
}

// splitJSON splits a stream of JSON values. A syntax error ends the stream with a chunk that
// holds the rest of the input and the error.
func splitJSON(data []byte) []chunk {
	var chunks []chunk
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		start := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return chunks
		}
		// The value starts after the whitespace that precedes it.
		for int(start) < len(data) && isSpace(data[start]) {
			start++
		}
		if err != nil {
			line, err := jsonError(data, err)
			return append(chunks, chunk{text: data[start:], line: line, err: err})
		}
		chunks = append(chunks, chunk{text: raw, line: lineAt(data, int(start))})
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// lineAt returns the 1-based line of a byte offset.
func lineAt(data []byte, offset int) int {
	return bytes.Count(data[:min(offset, len(data))], []byte("\n")) + 1
}

// jsonError names the line of a JSON syntax error and returns it.
func jsonError(data []byte, err error) (int, error) {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := lineAt(data, int(se.Offset))
		return line, fmt.Errorf("json: line %d: %s", line, se.Error())
	}
	line := lineAt(data, len(data))
	if err == io.ErrUnexpectedEOF {
		return line, fmt.Errorf("json: line %d: unexpected end of input", line)
	}
	return line, fmt.Errorf("json: %w", err)
}
