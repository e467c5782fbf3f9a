package operator_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
	"github.com/tenon-sh/tenon/pkg/apis/crds"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// An operator whose identity may not list one resource its caches need (here NodePools: RBAC
// grants every verb on every resource of every group, but in karpenter.sh list and watch on
// NodeClaims only) does not hang in its cache sync: /readyz fails, a log line names the
// refusal, and Start returns, soon after AccessDeniedFor, an error that names the resource and the verb.
// (Before, Start never returned and /readyz said only that the caches had not synced.)
func TestOperatorStopsWhenRBACRefusesACache(t *testing.T) {
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cp := testenv.Start(t, controlplane.Options{CRDs: all})
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(cp.RESTConfig())

	// Every group the API server serves, from discovery: all of them readable but karpenter.sh,
	// where the list and watch rule names NodeClaims only.
	groups, err := admin.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "create", "update", "patch", "delete"}}}
	for _, g := range groups.Groups {
		if g.Name == apisv1.Group {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g.Name}, Resources: []string{"nodeclaims"}, Verbs: []string{"list", "watch"}})
			continue
		}
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g.Name}, Resources: []string{"*"}, Verbs: []string{"list", "watch"}})
	}
	const ns, name = "default", "tenon-no-nodepools"
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: cp.APIServerURL(), BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: cp.CACert()}}

	// The binding reaches the authorizer: NodeClaims can be listed, NodePools cannot.
	sa := kubernetes.NewForConfigOrDie(cfg)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := sa.RESTClient().Get().AbsPath("/apis", apisv1.Group, "v1", "nodeclaims").Do(ctx).Error()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ServiceAccount still may not list NodeClaims: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	logged := &lines{}
	ctrl.SetLogger(logr.Discard())
	health := freeAddr(t)
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	op, err := operator.New(octx, cfg, operator.Options{
		MetricsAddr: "0", HealthAddr: health, AllowRepeatedControllers: true, AccessDeniedFor: 2 * time.Second,
	}, funcr.New(logged.add, funcr.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- op.Start(octx) }()

	// /readyz fails while the grace runs (controller-runtime withholds a check's reason from the
	// body and logs it; the guard's own log line names the refusal).
	for {
		code, body := get(t, "http://"+health+"/readyz")
		if code == http.StatusOK {
			t.Fatalf("/readyz is OK while a cache cannot sync: %s", body)
		}
		if logged.contains("nodepools") {
			break
		}
		if len(done) > 0 {
			t.Fatal("the operator stopped before its log named the refused resource")
		}
		if time.Since(began) > time.Minute {
			t.Fatal("a minute on, no log line names the refused resource, and the operator still waits for its caches")
		}
		time.Sleep(100 * time.Millisecond)
	}

	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Start returned nil while a cache could never sync")
		}
		msg := err.Error()
		for _, want := range []string{"nodepools", "list", apisv1.Group, "system:serviceaccount:default:" + name} {
			if !strings.Contains(msg, want) {
				t.Errorf("Start's error does not name %q: %s", want, msg)
			}
		}
		t.Logf("Start returned after %v: %v", time.Since(began).Round(100*time.Millisecond), err)
	case <-time.After(2 * time.Minute):
		t.Fatal("Start did not return within 2 minutes with list on nodepools refused: the start-up hangs")
	}
}

// lines collects log lines.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, prefix+" "+args)
}

func (l *lines) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.all {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}
