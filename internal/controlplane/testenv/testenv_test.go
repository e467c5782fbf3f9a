package testenv_test

import (
	"context"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/internal/controlplane/testenv"
)

// TestStartAPIServerOnly starts etcd and kube-apiserver alone and uses them as the admin.
func TestStartAPIServerOnly(t *testing.T) {
	cp := testenv.Start(t, controlplane.Options{})
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cp.RESTConfig())

	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; !slices.Contains(u.Groups, "system:masters") {
		t.Errorf("admin identity %q is in groups %v, want system:masters", u.Username, u.Groups)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testenv"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.Err(); err != nil {
		t.Fatalf("a component died: %v", err)
	}
}
