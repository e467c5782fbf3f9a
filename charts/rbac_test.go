package charts_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// The chart's RBAC is exactly what tenon needs, shown on a real kube-apiserver (RBAC
// authorization, with the OwnerReferencesPermissionEnforcement admission plugin production
// clusters such as OpenShift run): the rendered ServiceAccount, ClusterRole, Role and bindings
// are applied, a token is minted for the ServiceAccount, and tenon's operator runs
// authenticated with that token alone.
//
//   - "as the ServiceAccount": the whole scenario (provisioning, consolidation, a drain cut
//     short by the termination grace period) passes with no request denied, and every verb
//     the chart grants on every resource was used by a request tenon made.
//   - "without rule N": with that one rule removed, tenon is denied a request the rule allowed
//     (at start-up or during the scenario), so the rule is needed. By default a representative
//     subset runs (one rule met at start-up, the ones only the scenario's later steps reach);
//     TENON_RBAC_ALL_RULES=1 removes every rule in turn.
func TestChartRBACIsWhatTheControllerNeeds(t *testing.T) {
	h := newRBACHarness(t)

	t.Run("as the ServiceAccount", func(t *testing.T) {
		rec, err := h.run(t, h.fullRules)
		if err != nil {
			t.Fatalf("the scenario failed as the chart's ServiceAccount: %v (denied: %v)", err, rec.denied())
		}
		if denied := rec.denied(); len(denied) > 0 {
			t.Errorf("the chart's RBAC denied tenon %d requests: %v", len(denied), denied)
		}
		for _, g := range h.fullRules.grants() {
			if !slices.ContainsFunc(rec.allowed(), func(a apiRequest) bool { return g.matches(a) || g.admits(a) }) {
				if why, ok := unexercised[g.key()]; ok {
					t.Logf("%s is granted though the scenario does not reach it: %s", g, why)
					continue
				}
				t.Errorf("the chart grants %s, which tenon never used in the scenario: remove it, or extend the scenario", g)
			}
		}
	})

	all := os.Getenv("TENON_RBAC_ALL_RULES") != ""
	for _, victim := range h.fullRules.each() {
		if !all && !slices.Contains(ciRules, victim.String()) {
			continue
		}
		t.Run("without "+victim.String(), func(t *testing.T) {
			rules := h.fullRules.without(victim)
			rec, err := h.run(t, rules)
			var needed []apiRequest
			for _, d := range rec.denied() {
				if victim.allows(d) {
					needed = append(needed, d)
				}
			}
			switch {
			case len(needed) == 0 && err != nil:
				t.Fatalf("without %s the scenario failed, but with no denial the rule explains (denials: %v): %v", victim, rec.denied(), err)
			case len(needed) == 0:
				t.Fatalf("removing %s denied tenon nothing (denials: %v): the rule is not needed and must go", victim, rec.denied())
			}
			t.Logf("removing it denied %s (and %d requests in all)", needed[0], len(rec.denied()))
		})
	}
}

// ciRules are the rules whose removal `make test` checks; TENON_RBAC_ALL_RULES=1 checks all.
// Each is met only at a late step of the scenario, except the informer rule, which stands for
// the rules every start-up needs.
var ciRules = []string{
	"ClusterRole /pods,namespaces list,watch",
	"ClusterRole /pods/eviction create",
	"ClusterRole /pods delete",
	"ClusterRole karpenter.sh/nodeclaims/finalizers update",
	"ClusterRole /nodes/status patch",
	"Role coordination.k8s.io/leases[tenon-leader] get,update",
	"Role coordination.k8s.io/leases[karpenter-leader-election] get",
}

// unexercised are grants the scenario does not reach, each with the code path that needs it.
var unexercised = map[string]string{
	"events patch": "client-go's event recorder patches an event it has already sent when it repeats (count and series); tenon's own recorder suppresses identical events for 5 minutes, so a short scenario repeats none",
}

// --- the harness: one control plane, the chart's RBAC applied, a token, runs of the operator ---

type rbacHarness struct {
	cp        *controlplane.ControlPlane
	admin     client.Client
	cs        *kubernetes.Clientset
	token     string
	user      string
	fullRules ruleSet
}

func newRBACHarness(t *testing.T) *rbacHarness {
	t.Helper()
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{
		Scheduler: true, ControllerManager: true, Kwok: true, CRDs: all,
		ExtraArgs: map[string][]string{controlplane.APIServer: {
			"--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
			// Informers then LIST and WATCH, as against API servers without streaming lists;
			// with WatchList they would only WATCH, and list would look unused.
			"--feature-gates=WatchList=false",
		}},
	})
	h := &rbacHarness{cp: cp, cs: kubernetes.NewForConfigOrDie(cp.RESTConfig())}
	if h.admin, err = client.New(cp.RESTConfig(), client.Options{Scheme: operator.Scheme}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// The chart as `helm install tenon charts/tenon -n tenon-system` renders it; its RBAC and
	// ServiceAccount applied as they are. (The Deployment is not: the operator runs in-process.)
	objs := objects(t, mustRender(t, "tenon", nil))
	if err := h.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNamespace}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if err := h.admin.Create(ctx, o); err != nil {
				t.Fatalf("applying the chart's %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
	var roles []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Role" {
			roles = append(roles, o)
		}
	}
	h.fullRules = ruleSetOf(t, find(t, objs, "ClusterRole"), roles...)
	sa := find(t, objs, "ServiceAccount")

	// A token for the ServiceAccount, as the kubelet projects one into the pod.
	tr, err := h.cs.CoreV1().ServiceAccounts(releaseNamespace).CreateToken(ctx, sa.GetName(), &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("minting a token for the ServiceAccount: %v", err)
	}
	h.token = tr.Status.Token
	h.user = "system:serviceaccount:" + releaseNamespace + ":" + sa.GetName()

	// The token is the ServiceAccount's and nobody else's.
	review, err := kubernetes.NewForConfigOrDie(h.saConfig(nil)).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != h.user || slices.Contains(u.Groups, "system:masters") {
		t.Fatalf("the token authenticates as %q in %v, want %s", u.Username, u.Groups, h.user)
	}
	h.createVolumes(t)
	return h
}

// saConfig is a client configuration with the ServiceAccount's token and nothing else (no
// client certificate), its requests passed through rec when rec is not nil.
func (h *rbacHarness) saConfig(rec *recorder) *rest.Config {
	cfg := &rest.Config{
		Host:            h.cp.APIServerURL(),
		BearerToken:     h.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: h.cp.CACert()},
		QPS:             200, Burst: 400,
	}
	if rec != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return tap{rec: rec, next: rt} })
	}
	return cfg
}

// setRules writes rules into the ClusterRole and Role and waits until the authorizer applies
// them: a SubjectAccessReview of every grant agrees with the rules.
func (h *rbacHarness) setRules(t *testing.T, rules ruleSet) {
	t.Helper()
	ctx := context.Background()
	type objRules struct {
		obj   client.Object
		rules []rbacv1.PolicyRule
	}
	all := []objRules{{&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: rules.clusterRole}}, rules.cluster}}
	for _, r := range rules.roles {
		all = append(all, objRules{&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.namespace}}, r.rules})
	}
	for _, r := range all {
		if err := h.admin.Get(ctx, client.ObjectKeyFromObject(r.obj), r.obj); err != nil {
			t.Fatal(err)
		}
		switch o := r.obj.(type) {
		case *rbacv1.ClusterRole:
			o.Rules = r.rules
		case *rbacv1.Role:
			o.Rules = r.rules
		}
		if err := h.admin.Update(ctx, r.obj); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, g := range h.fullRules.grants() {
		want := slices.ContainsFunc(rules.grants(), func(x grant) bool { return x.key() == g.key() && x.name == g.name })
		for {
			got, err := h.allowed(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the authorizer says allowed=%t, the rules say %t; is the grant also made by another rule?", g, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// allowed asks the API server whether the ServiceAccount may do what g grants.
func (h *rbacHarness) allowed(ctx context.Context, g grant) (bool, error) {
	ns := g.namespace
	resource, sub, _ := strings.Cut(g.resource, "/")
	sar, err := h.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: h.user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: g.verb, Group: g.group, Resource: resource, Subresource: sub, Name: g.name},
	}}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// run applies rules, runs the operator as the ServiceAccount through the scenario, and
// cleans up. The scenario stops at the first request the API server denies. It returns what
// the operator asked the API server, and the scenario's error (or the operator's, when it
// would not start).
func (h *rbacHarness) run(t *testing.T, rules ruleSet) (*recorder, error) {
	t.Helper()
	h.setRules(t, rules)
	defer h.cleanup(t)
	rec := newRecorder()
	ctx := context.Background()

	log := logr.Discard()
	if os.Getenv("TENON_TEST_LOGS") != "" {
		log = zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true))
	}
	opts := operator.Options{
		MetricsAddr: "0", HealthAddr: "0", AllowRepeatedControllers: true,
		LeaderElection: true, LeaderElectionNamespace: releaseNamespace,
	}
	opts.Provisioning.BatchIdle, opts.Provisioning.BatchMax = 300*time.Millisecond, 3*time.Second
	// The NodeOverlay gate is on (it is off by default): the scenario's overlay gets its
	// conditions written, and every loop plans and launches through the overlays.
	opts.NodeOverlay = true
	opts.Lifecycle.UnavailableOfferingsTTL = time.Minute
	opts.Disruption.PassInterval, opts.Disruption.ValidationDelay, opts.Disruption.ReplacementTimeout = time.Second, time.Second, time.Minute

	// The scenario ends at the first denial, or when the operator exits by itself.
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	go func() {
		select {
		case <-rec.deniedCh:
		case <-sctx.Done():
		}
		scancel()
	}()
	var opErr error
	var stop func()
	startOperator := func() error {
		octx, ocancel := context.WithCancel(ctx)
		op, err := operator.New(octx, h.saConfig(rec), opts, log)
		if err != nil {
			ocancel()
			return fmt.Errorf("the operator did not start: %w", err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := op.Start(octx); err != nil && octx.Err() == nil {
				opErr = err
				scancel()
			}
		}()
		// An operator denied a list its caches need never finishes starting (controller-runtime
		// waits for every cache to sync): that is the start-up breaking. Its goroutines are left
		// to end with their context.
		stop = func() {
			ocancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Logf("the operator did not stop within 5s (its caches never synced); left behind")
			}
		}
		return nil
	}
	// restart stops the operator and starts a new one, as a new leader would take over; the
	// old one's Lease is removed rather than waited out.
	restart := func() error {
		stop()
		if err := h.admin.Delete(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "tenon-leader"}}); client.IgnoreNotFound(err) != nil {
			return err
		}
		return startOperator()
	}
	if err := startOperator(); err != nil {
		return rec, err
	}
	began := time.Now()
	err := h.scenario(sctx, t, restart)
	t.Logf("scenario ran %v (%d requests, %d denied)", time.Since(began).Round(100*time.Millisecond), rec.count(), len(rec.denied()))
	stop()
	if opErr != nil && err == nil {
		err = fmt.Errorf("the operator stopped: %w", opErr)
	}
	return rec, err
}

// --- what the operator asked the API server ---

// apiRequest is one request as the RBAC authorizer sees it, with the status it got.
type apiRequest struct {
	verb, group, resource, namespace, name string
	code                                   int
}

func (r apiRequest) String() string {
	s := r.verb + " " + r.group + "/" + r.resource
	if r.name != "" {
		s += "[" + r.name + "]"
	}
	if r.namespace != "" {
		s += " in " + r.namespace
	}
	return fmt.Sprintf("%s (%d)", s, r.code)
}

// recorder records every request the operator sends, through a tap on each of its clients.
type recorder struct {
	info     *request.RequestInfoFactory
	mu       sync.Mutex
	reqs     []apiRequest
	deniedCh chan struct{}
	once     sync.Once
}

func newRecorder() *recorder {
	return &recorder{
		info:     &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")},
		deniedCh: make(chan struct{}),
	}
}

// tap is the http.RoundTripper that feeds a recorder.
type tap struct {
	rec  *recorder
	next http.RoundTripper
}

func (t tap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	t.rec.record(req, resp)
	return resp, err
}

func (r *recorder) record(req *http.Request, resp *http.Response) {
	info, err := r.info.NewRequestInfo(req)
	if err != nil || !info.IsResourceRequest {
		return
	}
	res := info.Resource
	if info.Subresource != "" {
		res += "/" + info.Subresource
	}
	a := apiRequest{verb: info.Verb, group: info.APIGroup, resource: res, namespace: info.Namespace, name: info.Name}
	if resp != nil {
		a.code = resp.StatusCode
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, a)
	r.mu.Unlock()
	if a.code == http.StatusForbidden {
		r.once.Do(func() { close(r.deniedCh) })
	}
}

func (r *recorder) filter(keep func(apiRequest) bool) []apiRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []apiRequest
	for _, a := range r.reqs {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

func (r *recorder) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.reqs) }

// denied are the requests the authorizer refused.
func (r *recorder) denied() []apiRequest {
	return r.filter(func(a apiRequest) bool { return a.code == http.StatusForbidden })
}

// allowed are the requests the authorizer let through (whatever became of them after).
func (r *recorder) allowed() []apiRequest {
	return r.filter(func(a apiRequest) bool {
		return a.code != http.StatusForbidden && a.code != http.StatusUnauthorized && a.code != 0
	})
}

// --- the rules ---

// ruleSet is the rules of the chart's ClusterRole and Roles: the Role in tenon's namespace
// and the one in Karpenter's (its leader-election Lease).
type ruleSet struct {
	clusterRole string
	cluster     []rbacv1.PolicyRule
	roles       []roleRules
}

// roleRules are the rules of one Role.
type roleRules struct {
	name, namespace string
	rules           []rbacv1.PolicyRule
}

func ruleSetOf(t *testing.T, clusterRole *unstructured.Unstructured, roles ...*unstructured.Unstructured) ruleSet {
	t.Helper()
	var cr rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(clusterRole.Object, &cr); err != nil {
		t.Fatal(err)
	}
	s := ruleSet{clusterRole: cr.Name, cluster: cr.Rules}
	for _, role := range roles {
		var r rbacv1.Role
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(role.Object, &r); err != nil {
			t.Fatal(err)
		}
		s.roles = append(s.roles, roleRules{name: r.Name, namespace: r.Namespace, rules: r.Rules})
	}
	return s
}

// ruleRef is one rule of the set: of the ClusterRole when role < 0, else of roles[role].
type ruleRef struct {
	role      int
	namespace string // the Role's
	index     int
	rule      rbacv1.PolicyRule
}

func (r ruleRef) String() string {
	kind := "ClusterRole"
	if r.role >= 0 {
		kind = "Role"
	}
	names := ""
	if len(r.rule.ResourceNames) > 0 {
		names = "[" + strings.Join(r.rule.ResourceNames, ",") + "]"
	}
	return fmt.Sprintf("%s %s/%s%s %s", kind, strings.Join(r.rule.APIGroups, ","), strings.Join(r.rule.Resources, ","), names, strings.Join(r.rule.Verbs, ","))
}

// allows says whether the rule allows request a, itself or through admission.
func (r ruleRef) allows(a apiRequest) bool {
	for _, g := range grantsOf(r) {
		if g.matches(a) || g.admits(a) {
			return true
		}
	}
	return false
}

func (s ruleSet) each() []ruleRef {
	var out []ruleRef
	for i, r := range s.cluster {
		out = append(out, ruleRef{role: -1, index: i, rule: r})
	}
	for ri, role := range s.roles {
		for i, r := range role.rules {
			out = append(out, ruleRef{role: ri, namespace: role.namespace, index: i, rule: r})
		}
	}
	return out
}

func (s ruleSet) without(victim ruleRef) ruleSet {
	out := s
	if victim.role >= 0 {
		out.roles = slices.Clone(s.roles)
		r := &out.roles[victim.role]
		r.rules = slices.Delete(slices.Clone(r.rules), victim.index, victim.index+1)
	} else {
		out.cluster = slices.Delete(slices.Clone(s.cluster), victim.index, victim.index+1)
	}
	return out
}

// grant is one verb on one resource (and name, when the rule names some) that a rule allows;
// namespace is the Role's, empty for the ClusterRole's.
type grant struct {
	namespace                   string
	group, resource, verb, name string
}

func (g grant) key() string {
	return strings.TrimPrefix(g.group+"/"+g.resource, "/") + " " + g.verb
}

func (g grant) String() string {
	if g.name != "" {
		return g.key() + " [" + g.name + "]"
	}
	return g.key()
}

func (g grant) matches(a apiRequest) bool {
	if a.verb != g.verb || a.group != g.group || a.resource != g.resource {
		return false
	}
	if g.namespace != "" && a.namespace != g.namespace {
		return false
	}
	return g.name == "" || a.name == g.name
}

// admittedBy are the grants no request uses but an admission plugin checks for others:
// OwnerReferencesPermissionEnforcement lets an object name an owner with blockOwnerDeletion
// only when its writer may update the owner's finalizers. tenon's NodeClaims are owned so by
// their NodePool, and registered Nodes by their NodeClaim.
var admittedBy = map[string]func(apiRequest) bool{
	"karpenter.sh/nodepools/finalizers update": func(a apiRequest) bool {
		return a.verb == "create" && a.group == "karpenter.sh" && a.resource == "nodeclaims"
	},
	"karpenter.sh/nodeclaims/finalizers update": func(a apiRequest) bool {
		return a.verb == "patch" && a.group == "" && a.resource == "nodes"
	},
}

// admits says whether g is what admission checks for request a.
func (g grant) admits(a apiRequest) bool {
	f, ok := admittedBy[g.key()]
	return ok && f(a)
}

func grantsOf(r ruleRef) []grant {
	names := r.rule.ResourceNames
	if len(names) == 0 {
		names = []string{""}
	}
	var out []grant
	for _, group := range r.rule.APIGroups {
		for _, res := range r.rule.Resources {
			for _, verb := range r.rule.Verbs {
				for _, n := range names {
					out = append(out, grant{namespace: r.namespace, group: group, resource: res, verb: verb, name: n})
				}
			}
		}
	}
	return out
}

func (s ruleSet) grants() []grant {
	var out []grant
	for _, r := range s.each() {
		out = append(out, grantsOf(r)...)
	}
	return out
}
