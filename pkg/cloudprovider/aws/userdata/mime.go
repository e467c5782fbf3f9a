package userdata

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strings"
)

// Content types of MIME parts.
const (
	contentTypeShell    = `text/x-shellscript; charset="us-ascii"`
	contentTypeNodeadm  = "application/node.eks.aws"
	defaultMIMEBoundary = "//"
)

// part is one MIME part.
type part struct {
	contentType string
	body        string
}

// isMIME reports whether user data is a MIME document.
func isMIME(s string) bool {
	head := strings.ToLower(strings.TrimLeft(s, " \t\r\n"))
	return strings.HasPrefix(head, "mime-version:") || strings.HasPrefix(head, "content-type: multipart/")
}

// userParts reads the user's user data: a MIME multipart's parts, or (for plain text) one
// part whose content type plain decides. Empty user data has no parts.
func userParts(s string, plain func(string) string) ([]part, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if !isMIME(s) {
		return []part{{contentType: plain(s), body: s}}, nil
	}
	msg, err := mail.ReadMessage(bufio.NewReader(strings.NewReader(s)))
	if err != nil {
		return nil, fmt.Errorf("reading the MIME user data: %w", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("reading the MIME user data's content type: %w", err)
	}
	if !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return nil, fmt.Errorf("the MIME user data is %s, not a multipart document with a boundary", mt)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var parts []part
	for {
		p, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading a part of the MIME user data: %w", err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("reading a part of the MIME user data: %w", err)
		}
		ct := p.Header.Get("Content-Type")
		if ct == "" {
			ct = "text/plain"
		}
		parts = append(parts, part{contentType: ct, body: string(body)})
	}
}

// writeMIME renders parts as one multipart/mixed document, with the boundary "//" unless a
// part contains it.
func writeMIME(parts []part) string {
	boundary := defaultMIMEBoundary
	for i := 0; ; i++ {
		clash := false
		for _, p := range parts {
			if strings.Contains(p.body, "--"+boundary) {
				clash = true
				break
			}
		}
		if !clash {
			break
		}
		boundary = fmt.Sprintf("//tenon-%d//", i)
	}
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\n")
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=%q\n\n", boundary)
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\n", boundary)
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", p.contentType)
		fmt.Fprintf(&b, "Content-Type: %s\n\n", h.Get("Content-Type"))
		b.WriteString(p.body)
		if !strings.HasSuffix(p.body, "\n") {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "--%s--\n", boundary)
	return b.String()
}
