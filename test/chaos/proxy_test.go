package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// faultKind is what the proxy does to a faulted call.
type faultKind int

const (
	// faultThrottle answers 429 without Retry-After, so the client sees the error (client-go
	// retries a 429 or 5xx only when the server names a Retry-After).
	faultThrottle faultKind = iota
	// faultServerError answers 500 without forwarding.
	faultServerError
	// faultLostResponse forwards the call, so it takes effect, and answers 504 as if the
	// response had timed out: the caller does not know it happened.
	faultLostResponse
	faultKinds
)

var faultNames = [faultKinds]string{"throttle", "server-error", "lost-response"}

// faultProxy stands between the controller and kube-apiserver (plain HTTP towards the
// controller, the admin's TLS towards the API server) and fails, at a seeded rate, the calls
// that are the simulated cloud's API: every write to a SimInstance (launch, status, terminate).
// The simulated provider keeps its instances in those objects, so a failed write is, to tenon,
// a failed cloud call: RunInstances answering 500, throttling, or timing out after it launched.
type faultProxy struct {
	url  string
	rate float64

	mu       sync.Mutex
	rng      *rand.Rand
	injected [faultKinds]int
	calls    int
	off      bool
}

func startFaultProxy(t *testing.T, cfg *rest.Config, rate float64, seed int64) *faultProxy {
	t.Helper()
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{rate: rate, rng: rand.New(rand.NewPCG(uint64(seed), 0x6661756c74))}
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	rp.ErrorLog = nil
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, ok := p.draw(r)
		switch {
		case !ok:
			rp.ServeHTTP(w, r)
		case kind == faultLostResponse:
			rec := &discard{header: http.Header{}}
			rp.ServeHTTP(rec, r)
			status(w, http.StatusGatewayTimeout, metav1.StatusReasonTimeout, "the request timed out (injected after it was served)")
		case kind == faultThrottle:
			status(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "throttled (injected)")
		default:
			status(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "internal error (injected)")
		}
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	p.url = "http://" + l.Addr().String()
	return p
}

// draw decides whether r is faulted, and how.
func (p *faultProxy) draw(r *http.Request) (faultKind, bool) {
	if r.Method == http.MethodGet || !strings.Contains(r.URL.Path, "/siminstances") {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.off || p.rng.Float64() >= p.rate {
		return 0, false
	}
	k := faultKind(p.rng.IntN(int(faultKinds)))
	p.injected[k]++
	return k, true
}

// stop lets every later call through.
func (p *faultProxy) stop() {
	p.mu.Lock()
	p.off = true
	p.mu.Unlock()
}

func (p *faultProxy) summary() (calls, injected int, by string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var parts []string
	for k, n := range p.injected {
		injected += n
		parts = append(parts, fmt.Sprintf("%s %d", faultNames[k], n))
	}
	return p.calls, injected, strings.Join(parts, ", ")
}

// kubeconfig writes a kubeconfig that points at the proxy.
func (p *faultProxy) kubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["chaos"] = &clientcmdapi.Cluster{Server: p.url}
	cfg.AuthInfos["chaos"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["chaos"] = &clientcmdapi.Context{Cluster: "chaos", AuthInfo: "chaos"}
	cfg.CurrentContext = "chaos"
	path := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func status(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg,
	})
}

// discard is a ResponseWriter that drops what it is given.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return io.Discard.Write(b) }
func (d *discard) WriteHeader(int)             {}
