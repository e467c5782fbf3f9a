package controlplane_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
)

// A restarted kube-apiserver comes back on the same address with the same etcd: what was
// written before is still there, the same client writes again, and a watch opened before the
// restart is closed (so that its owner re-lists) rather than left hanging.
func TestRestartAPIServerKeepsAddressAndState(t *testing.T) {
	cp := testenv.Start(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	cms := cs.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	url := cp.APIServerURL()
	for _, kill := range []bool{false, true} {
		if err := cp.RestartAPIServer(ctx, 500*time.Millisecond, kill); err != nil {
			t.Fatalf("restart (kill=%v): %v", kill, err)
		}
		if cp.APIServerURL() != url {
			t.Errorf("address changed: %s, was %s", cp.APIServerURL(), url)
		}
		if _, err := cms.Get(ctx, "before", metav1.GetOptions{}); err != nil {
			t.Errorf("after restart (kill=%v): %v", kill, err)
		}
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	closed := false
	for !closed {
		select {
		case ev, ok := <-w.ResultChan():
			closed = !ok || ev.Type == watch.Error
		case <-ctx.Done():
			t.Fatal("the watch opened before the restart was never closed")
		}
	}
	if err := cp.Err(); err != nil {
		t.Errorf("the restart was reported as a failure: %v", err)
	}
}
