package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// probe is a readiness endpoint: ready when GET url answers 200.
type probe struct {
	url    string
	client *http.Client
}

// httpClient returns a client for the components' endpoints: it trusts ca (when not nil) and
// presents cert (when not nil). Keep-alives are off so probes leave no idle connections.
func httpClient(ca []byte, cert *keyPair) (*http.Client, error) {
	tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
	if ca != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("controlplane: invalid CA certificate")
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	if cert != nil {
		c, err := tls.X509KeyPair(cert.cert, cert.key)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig.Certificates = []tls.Certificate{c}
	}
	return &http.Client{Transport: tr, Timeout: 2 * time.Second}, nil
}

// waitReady polls pr every 50 ms until it answers 200, the process exits, or ctx ends.
func waitReady(ctx context.Context, p *process, pr probe) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, pr.url, nil)
		if err != nil {
			return err
		}
		resp, err := pr.client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				select {
				case <-p.done:
					// Something else answered on its port: the component itself is gone.
					return p.exitError()
				default:
					return nil
				}
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-p.done:
			return p.exitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready (GET %s: %s): %w%s", p.name, pr.url, last, ctx.Err(), p.logTail(30))
		case <-tick.C:
		}
	}
}
