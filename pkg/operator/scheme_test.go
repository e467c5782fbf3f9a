package operator_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	simv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	apisv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/v1alpha1"
	"github.com/tenon-sh/tenon/pkg/operator"
)

// The operator's scheme knows every kind of tenon's API packages, so its clients and caches can
// read and write them.
func TestSchemeKnowsTheAPIKinds(t *testing.T) {
	for obj, want := range map[runtime.Object]schema.GroupVersionKind{
		&apisv1.NodePool{}:              apisv1.SchemeGroupVersion.WithKind("NodePool"),
		&apisv1.NodeClaim{}:             apisv1.SchemeGroupVersion.WithKind("NodeClaim"),
		&apisv1alpha1.NodeOverlay{}:     apisv1alpha1.SchemeGroupVersion.WithKind("NodeOverlay"),
		&simv1alpha1.SimNodeClass{}:     simv1alpha1.SchemeGroupVersion.WithKind("SimNodeClass"),
		&simv1alpha1.SimInstance{}:      simv1alpha1.SchemeGroupVersion.WithKind("SimInstance"),
		&awsv1.EC2NodeClass{}:           awsv1.SchemeGroupVersion.WithKind("EC2NodeClass"),
		&tenonv1alpha1.Commitment{}:     tenonv1alpha1.SchemeGroupVersion.WithKind(tenonv1alpha1.CommitmentKind),
		&tenonv1alpha1.CommitmentList{}: tenonv1alpha1.SchemeGroupVersion.WithKind(tenonv1alpha1.CommitmentListKind),
	} {
		gvks, _, err := operator.Scheme.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0] != want {
			t.Errorf("%T: %v, %v; want %s", obj, gvks, err, want)
		}
	}
}
