package awsapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// engineClass is the one class of the engine the endpoint sells through.
const engineClass = "aws"

// DefaultAccount is the account ID the endpoint's resources belong to.
const DefaultAccount = "111122223333"

// Options configure New. Zero fields take the defaults named on each.
type Options struct {
	// Catalog is what the region sells (default catalog.Load(catalog.DefaultRegion)). Its
	// reservations are the capacity reservations; capacity blocks are those with a Window.
	Catalog *catalog.Catalog
	// Pools, Targeted, Delays and Interruptions configure the engine (see cloud.ClassConfig).
	Pools         []cloud.Pool
	Targeted      []string
	Delays        cloud.Delays
	Interruptions cloud.Interruptions
	// IDSeed seeds instance IDs (see cloud.Options).
	IDSeed uint64
	// Clock is the time the engine runs at (default the real clock).
	Clock clock.Clock
	// ClusterName names the cluster the network is tagged for (default "tenon").
	ClusterName string
	// Account is the account ID (default DefaultAccount).
	Account string
	// Network is the VPC, subnets and security groups (default DefaultNetwork).
	Network *Network
	// KubernetesVersions are the versions AMIs are published for (default 1.36 and 1.37).
	KubernetesVersions []string
	// AL2023Releases and BottlerocketReleases are the AMI releases published per version, the
	// last one the recommended (latest) one (defaults v20261101, v20261115 and 1.49.0, 1.50.0).
	AL2023Releases       []string
	BottlerocketReleases []string
	// InterruptionQueue, when set, names an SQS queue created at start that receives the
	// engine's interruptions and state changes as EventBridge messages.
	InterruptionQueue string
	// TerminatedRetention is how long terminated instances stay visible (default 1h).
	TerminatedRetention time.Duration
	// MaxWait bounds a ReceiveMessage long poll in real time (default 2s; SQS allows 20s).
	MaxWait time.Duration
	// Tick is how often Start brings the engine up to the clock between requests (default 1s).
	Tick time.Duration
	// ReservationTags are the tags of the catalog's reservations, by reservation ID.
	ReservationTags map[string]map[string]string
	// OnInstance, when set, is called (without the server's lock held) for each change an
	// instance's Node must follow, in order, on the goroutine of the request or Sync that
	// brought the engine past it; it may call the server.
	OnInstance func(InstanceEvent)
}

func (o Options) withDefaults() (Options, error) {
	if o.Catalog == nil {
		c, err := catalog.Load(catalog.DefaultRegion)
		if err != nil {
			return o, err
		}
		o.Catalog = c
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.ClusterName == "" {
		o.ClusterName = "tenon"
	}
	if o.Account == "" {
		o.Account = DefaultAccount
	}
	if o.Network == nil {
		o.Network = DefaultNetwork(o.ClusterName, o.Catalog.Zones)
	}
	if len(o.KubernetesVersions) == 0 {
		o.KubernetesVersions = []string{"1.36", "1.37"}
	}
	if len(o.AL2023Releases) == 0 {
		o.AL2023Releases = []string{"v20261101", "v20261115"}
	}
	if len(o.BottlerocketReleases) == 0 {
		o.BottlerocketReleases = []string{"1.49.0", "1.50.0"}
	}
	if o.TerminatedRetention <= 0 {
		o.TerminatedRetention = time.Hour
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 2 * time.Second
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	return o, nil
}

// Server is the endpoint. It is safe for concurrent use.
type Server struct {
	opts   Options
	region string

	mu        sync.Mutex
	engine    *cloud.Cloud
	instances map[string]*instance // by instance ID, while the engine knows them
	templates map[string]*launchTemplate
	fleets    map[string]*createFleetResponse // by client token
	ipSeq     int
	ice       map[cloudprovider.Offering]bool
	faults    []*Fault
	images    []image
	// extraImages are the images AddImage added; publishImages keeps them.
	extraImages []image
	// placementGroups are the groups AddPlacementGroup added.
	placementGroups []PlacementGroup
	params          map[string]string // SSM parameter → AMI ID
	queues          map[string]*queue
	profiles        map[string]*instanceProfile
	seq             uint64
	pending         []InstanceEvent // for OnInstance, delivered after unlock
	notify          chan struct{}   // closed and replaced when a queue gets messages
	hooks           sync.Mutex      // serialises OnInstance deliveries

	// typeInfos and prices describe the catalog's types once (DescribeInstanceTypes and
	// GetProducts); they never change.
	typeInfos []instanceTypeInfo
	prices    []priceEntry
	// spotOverrides and docOverrides replace spot prices and price-list documents (see
	// SetSpotPrice and SetPriceDocument); guarded by mu.
	spotOverrides map[spotPair]float64
	docOverrides  map[string]string
}

// New builds a server and its engine.
func New(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("awsapi: %w", err)
	}
	if err := opts.Network.validate(opts.Catalog); err != nil {
		return nil, fmt.Errorf("awsapi: %w", err)
	}
	engine := cloud.New(cloud.Options{IDSeed: opts.IDSeed})
	cfg := cloud.ClassConfig{Catalog: opts.Catalog, Pools: opts.Pools, Targeted: opts.Targeted, Delays: opts.Delays, Interruptions: opts.Interruptions}
	if err := engine.SetClass(engineClass, cfg); err != nil {
		return nil, fmt.Errorf("awsapi: %w", err)
	}
	s := &Server{
		opts:      opts,
		region:    opts.Catalog.Region,
		engine:    engine,
		instances: map[string]*instance{},
		templates: map[string]*launchTemplate{},
		fleets:    map[string]*createFleetResponse{},
		ice:       map[cloudprovider.Offering]bool{},
		queues:    map[string]*queue{},
		profiles:  map[string]*instanceProfile{},
		notify:    make(chan struct{}),
	}
	for _, it := range opts.Catalog.Types {
		s.typeInfos = append(s.typeInfos, typeInfo(it))
	}
	s.prices = priceEntries(s.region, opts.Catalog)
	s.publishImages()
	if opts.InterruptionQueue != "" {
		s.queues[opts.InterruptionQueue] = newQueue(opts.InterruptionQueue)
	}
	return s, nil
}

// Region is the region the server serves.
func (s *Server) Region() string { return s.region }

// Start serves on addr (":0" picks a free port) until ctx is done, and brings the engine up to
// the clock every Options.Tick between requests. It returns the base URL to give the SDK.
func Start(ctx context.Context, addr string, opts Options) (*Server, string, error) {
	s, err := New(opts)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("awsapi: %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		t := time.NewTicker(s.opts.Tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = srv.Shutdown(sctx)
				cancel()
				return
			case <-t.C:
				s.Sync()
			}
		}
	}()
	return s, "http://" + ln.Addr().String(), nil
}

// Sync brings the engine up to the clock's now: instances boot, register and go, interruptions
// are published, terminated instances past their retention are forgotten.
func (s *Server) Sync() {
	s.mu.Lock()
	s.syncLocked()
	s.mu.Unlock()
	s.deliver()
}

// ServeHTTP dispatches a request to its service by its X-Amz-Target header (JSON protocols) or
// its Action and Version form fields (Query protocols).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.deliver()
	if strings.HasPrefix(r.URL.Path, ControlPrefix) {
		s.serveControl(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "only POST is served", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<20)
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		service, op, _ := strings.Cut(target, ".")
		switch service {
		case "AmazonSSM":
			s.serveJSON(w, r, svcSSM, op, "1.1", s.ssm)
		case "AmazonSQS":
			s.serveJSON(w, r, svcSQS, op, "1.0", s.sqs)
		case "AWSPriceListService":
			s.serveJSON(w, r, svcPricing, op, "1.1", s.pricing)
		default:
			writeJSONError(w, "1.1", &apiError{Status: http.StatusBadRequest, Code: "UnknownOperationException", Message: "unknown target " + target})
		}
		return
	}
	if err := r.ParseForm(); err != nil {
		writeEC2Error(w, "", &apiError{Status: http.StatusBadRequest, Code: "MalformedQueryString", Message: err.Error()})
		return
	}
	f := form(r.PostForm)
	switch f.get("Version") {
	case iamVersion:
		s.serveIAM(w, r, f)
	default:
		s.serveEC2(w, r, f)
	}
}

// apiError is an error as the wire carries it.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func badRequest(code, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: code, Message: fmt.Sprintf(format, args...)}
}

func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return &apiError{Status: http.StatusInternalServerError, Code: "InternalError", Message: err.Error()}
}

// requestID returns a new request ID.
func (s *Server) requestID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(s.seq), s.seq)
}

// nextID returns a new resource ID with the prefix ("lt", "msg", ...). Callers hold mu.
func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s-0%016x", prefix, s.seq*0x9e3779b97f4a7c15>>4)
}

// syncLocked is Sync with mu held.
func (s *Server) syncLocked() {
	now := s.opts.Clock.Now()
	for _, ev := range s.engine.Advance(now) {
		s.handleEvent(ev)
	}
	for id, inst := range s.instances {
		ei, ok := s.engine.Instance(id)
		if ok && ei.State == cloud.Terminated && now.Sub(ei.TerminatedAt) >= s.opts.TerminatedRetention {
			_ = s.engine.Forget(id)
			delete(s.instances, id)
			_ = inst
		}
	}
}

// deliver calls OnInstance for the pending events, in order, without mu held. One goroutine
// delivers at a time, until nothing is pending; a callback may call the server (over HTTP
// too): the events that causes are delivered after it returns, by the same loop.
func (s *Server) deliver() {
	if s.opts.OnInstance == nil || !s.hooks.TryLock() {
		return
	}
	defer s.hooks.Unlock()
	for {
		s.mu.Lock()
		evs := s.pending
		s.pending = nil
		s.mu.Unlock()
		if len(evs) == 0 {
			return
		}
		for _, ev := range evs {
			s.opts.OnInstance(ev)
		}
	}
}
