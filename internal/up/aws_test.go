package up

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/internal/controlplane"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/aws"
)

// `tenon up --cloud-provider aws` runs the loop through the AWS provider against the
// project's EC2-compatible endpoint: the example EC2NodeClass is resolved by tenon's status
// controller, the workload's pods run on nodes of instances launched through EC2 Fleet, and
// the summary prices them.
func TestUpThroughTheAWSProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	if _, err := controlplane.BinDir(); err != nil {
		t.Fatalf("the control plane is not built (hack/build-controlplane.sh): %v", err)
	}
	workload := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(workload, []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: example.com/web
        resources: {requests: {cpu: "1", memory: 2Gi}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts := Options{Files: []string{workload}, ExitAfter: 45 * time.Second, Out: &out}
	opts.Operator.CloudProvider = aws.ProviderName
	sum, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if sum == nil || sum.Pods != 4 || sum.Running != 4 || sum.Nodes == 0 || sum.NodeClaims != sum.Nodes || sum.PricePerHour <= 0 {
		t.Fatalf("summary %+v; want 4 running pods on priced nodes, one per NodeClaim\n%s", sum, out.String())
	}
	if !strings.Contains(out.String(), "Cloud: the AWS provider, against the EC2-compatible endpoint at http://127.0.0.1:") {
		t.Fatalf("the output does not say which cloud runs:\n%s", out.String())
	}
}
