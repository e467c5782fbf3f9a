package awsapi

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// The Kubelet's passes are driven one by one with the fake clock against a fake client, so
// the test can check what exists at each instant, as the simulated provider's kubelet tests do.
func TestKubeletRegistersANodePerInstanceAddsItsGPUsAndDeletesItOnShutdown(t *testing.T) {
	e := newEnv(t, Options{Delays: cloud.Delays{Boot: 30 * time.Second, Registration: 10 * time.Second, DevicePlugin: 20 * time.Second, Shutdown: 30 * time.Second}})
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&corev1.Node{}).Build()
	k := &Kubelet{Server: e.s, Client: c}
	sn := e.subnets(t)
	e.template(t, "gpu-lt", "x86_64", nil)
	out, err := e.ec2.CreateFleet(ctx, fleet("gpu-lt", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("g5.xlarge", sn["us-east-1c"])))
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("launch: %+v (%v)", out.Errors, err)
	}
	id := out.Instances[0].InstanceIds[0]
	desc, _ := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	name := aws.ToString(desc.Reservations[0].Instances[0].PrivateDnsName)
	node := func() (*corev1.Node, bool) {
		t.Helper()
		n := &corev1.Node{}
		err := c.Get(ctx, types.NamespacedName{Name: name}, n)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return n, err == nil
	}
	pass := func() {
		t.Helper()
		if err := k.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	e.advance(39 * time.Second)
	pass()
	if _, ok := node(); ok {
		t.Fatal("a Node registered before its registration delay")
	}
	e.advance(time.Second)
	pass()
	n, ok := node()
	if !ok {
		t.Fatalf("no Node %s after registration", name)
	}
	if n.Spec.ProviderID != "aws:///us-east-1c/"+id || n.Labels[apisv1.LabelInstanceType] != "g5.xlarge" || n.Labels[apisv1.LabelZone] != "us-east-1c" || n.Labels[apisv1.LabelHostname] != name {
		t.Errorf("Node %s: %s %v", n.Name, n.Spec.ProviderID, n.Labels)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != apisv1.UnregisteredNoExecuteTaint.Key {
		t.Errorf("taints %v", n.Spec.Taints)
	}
	if _, has := n.Status.Capacity["nvidia.com/gpu"]; has {
		t.Error("GPUs before the device plugin ran")
	}
	e.advance(20 * time.Second)
	pass()
	n, _ = node()
	if q := n.Status.Allocatable["nvidia.com/gpu"]; q.Value() != 1 {
		t.Errorf("allocatable GPUs %v after the device plugin", q.String())
	}
	if _, err := e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	pass()
	if _, ok := node(); ok {
		t.Fatal("the Node outlived its instance's shutdown")
	}
	// Deleted once, never registered again, even while the instance is still listed.
	pass()
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.InNamespace("")); err != nil || len(nodes.Items) != 0 {
		t.Fatalf("%d Nodes (%v)", len(nodes.Items), err)
	}
}
