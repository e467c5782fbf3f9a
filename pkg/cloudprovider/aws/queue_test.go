package aws

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// queue is an interruption queue with nothing in it: what is tested is the wiring, not a queue.
type queue struct{ done []string }

func (q *queue) Receive(context.Context) ([]cloudprovider.InterruptionMessage, error) {
	return nil, nil
}
func (q *queue) Done(_ context.Context, id string) error { q.done = append(q.done, id); return nil }
func (q *queue) NodeClasses() []schema.GroupKind         { return NodeClasses }

func TestTheInterruptionQueueIsServedOnlyWhenConfigured(t *testing.T) {
	opts := Options{Client: nil, Region: "us-east-1", ClusterName: "c", RESTConfig: &rest.Config{Host: "https://k", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}}
	if _, err := New(opts); err == nil {
		t.Fatal("New without a client or EC2 should fail")
	}
	// New makes no calls, so a real client that is never used and a reader that is never
	// read suffice.
	opts.Client, opts.EC2 = unreadable{}, ec2.New(ec2.Options{Region: "us-east-1"})
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.CloudProvider().(cloudprovider.InterruptionQueue); ok {
		t.Fatal("without a queue the provider must not look like one")
	}
	q := &queue{}
	opts.InterruptionQueue = q
	p, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	cp := p.CloudProvider()
	iq, ok := cp.(cloudprovider.InterruptionQueue)
	if !ok {
		t.Fatal("with a queue the operator's type assertion must hold")
	}
	if err := iq.Done(context.Background(), "m-1"); err != nil || len(q.done) != 1 {
		t.Fatalf("Done went to %v, %v", q.done, err)
	}
	if cp.Name() != "aws" || !cloudprovider.IsManaged(cp, claim("x", "nc")) {
		t.Fatal("the wrapped provider must serve EC2NodeClass")
	}
}

func TestClusterInfoComesFromOptionsOrTheRESTConfig(t *testing.T) {
	c, err := clusterInfo(Options{ClusterName: "c", RESTConfig: &rest.Config{Host: "https://api", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("pem")}}})
	if err != nil || c.Endpoint != "https://api" || c.CABundle != "cGVt" {
		t.Fatalf("discovered %+v, %v", c, err)
	}
	c, err = clusterInfo(Options{ClusterName: "c", ClusterEndpoint: "https://flag", ClusterCABundle: "ZmxhZw==", RESTConfig: &rest.Config{Host: "https://api"}})
	if err != nil || c.Endpoint != "https://flag" || c.CABundle != "ZmxhZw==" {
		t.Fatalf("flags should win: %+v, %v", c, err)
	}
	if _, err := clusterInfo(Options{ClusterName: "c", ClusterEndpoint: "https://flag"}); err == nil {
		t.Fatal("no CA bundle anywhere should be an error")
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.100.0.1")
	inCluster := &rest.Config{Host: "https://10.100.0.1:443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("pem")}}
	if _, err := clusterInfo(Options{ClusterName: "c", RESTConfig: inCluster}); err == nil {
		t.Fatal("the in-cluster service address is no endpoint for nodes")
	}
	if c, err := clusterInfo(Options{ClusterName: "c", ClusterEndpoint: "https://eks", RESTConfig: inCluster}); err != nil || c.CABundle != "cGVt" {
		t.Fatalf("with --cluster-endpoint the CA still comes from the in-cluster config: %+v, %v", c, err)
	}
}

// unreadable is a client.Reader that must never be called (a nil embedded interface).
type unreadable struct{ client.Reader }
