package awsapi

import (
	"bytes"
	"io"
	"net/http"
	"sync/atomic"
)

// HTTPClient is an HTTP client for SDK clients pointed at this endpoint over loopback. It
// reads each request body into memory before sending it and can count the requests it sends.
// Set it as aws.Config.HTTPClient after config.LoadDefaultConfig, or as a client's
// Options.HTTPClient; config.WithHTTPClient rejects it when AWS_CA_BUNDLE is set, since it
// has no transport to add the bundle to.
//
// Buffering matters on loopback: the endpoint can answer before net/http's writer has finished
// with the SDK's streamed body, and the transport then closes the connection under a large
// response still being read ("use of closed network connection"), which the SDK retries. A
// buffered body does not race, so responses arrive whole and request counts are exact.
type HTTPClient struct {
	// Next sends the requests; http.DefaultClient when nil.
	Next *http.Client
	// Calls, when set, is incremented once per request sent (attempts and retries alike).
	Calls *atomic.Int64
}

// Do buffers r's body, counts r and sends it.
func (c HTTPClient) Do(r *http.Request) (*http.Response, error) {
	if c.Calls != nil {
		c.Calls.Add(1)
	}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	next := c.Next
	if next == nil {
		next = http.DefaultClient
	}
	return next.Do(r)
}
