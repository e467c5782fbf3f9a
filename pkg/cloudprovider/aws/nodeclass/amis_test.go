package nodeclass

import (
	"slices"
	"strings"
	"testing"
	"time"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/awsapi"
)

const (
	amd64Standard = "kubernetes.io/arch In amd64, karpenter.k8s.aws/instance-gpu-count DoesNotExist, karpenter.k8s.aws/instance-accelerator-count DoesNotExist"
	arm64Standard = "kubernetes.io/arch In arm64, karpenter.k8s.aws/instance-gpu-count DoesNotExist, karpenter.k8s.aws/instance-accelerator-count DoesNotExist"
	amd64Nvidia   = "kubernetes.io/arch In amd64, karpenter.k8s.aws/instance-gpu-count Exists"
	arm64Nvidia   = "kubernetes.io/arch In arm64, karpenter.k8s.aws/instance-gpu-count Exists"
	amd64Neuron   = "kubernetes.io/arch In amd64, karpenter.k8s.aws/instance-accelerator-count Exists"
)

// Each alias family resolves through its SSM parameters to one AMI per variant and
// architecture, each with the requirements of its variant; a pinned version picks that
// release, latest the newest.
func TestAliasesResolveEveryFamilyAndVersion(t *testing.T) {
	e := newEndpoint(t, awsapi.Options{KubernetesVersions: []string{"1.32", "1.37"}})
	for _, tc := range []struct {
		alias, k8s string
		// want maps each AMI's requirements to a substring of its name.
		want map[string]string
	}{
		{"al2023@latest", "1.37", map[string]string{
			amd64Standard: "al2023-x86_64-standard-1.37-v20261115", arm64Standard: "al2023-arm64-standard-1.37-v20261115",
			amd64Nvidia: "al2023-x86_64-nvidia-1.37-v20261115", arm64Nvidia: "al2023-arm64-nvidia-1.37-v20261115",
			amd64Neuron: "al2023-x86_64-neuron-1.37-v20261115",
		}},
		{"al2023@v20261101", "1.37", map[string]string{
			amd64Standard: "al2023-x86_64-standard-1.37-v20261101", arm64Standard: "al2023-arm64-standard-1.37-v20261101",
			amd64Nvidia: "al2023-x86_64-nvidia-1.37-v20261101", arm64Nvidia: "al2023-arm64-nvidia-1.37-v20261101",
			amd64Neuron: "al2023-x86_64-neuron-1.37-v20261101",
		}},
		{"bottlerocket@latest", "1.37", map[string]string{
			amd64Standard: "bottlerocket-aws-k8s-1.37-x86_64-v1.50.0", amd64Neuron: "bottlerocket-aws-k8s-1.37-x86_64-v1.50.0",
			arm64Standard: "bottlerocket-aws-k8s-1.37-arm64-v1.50.0",
			amd64Nvidia:   "bottlerocket-aws-k8s-1.37-nvidia-x86_64-v1.50.0", arm64Nvidia: "bottlerocket-aws-k8s-1.37-nvidia-arm64-v1.50.0",
		}},
		{"bottlerocket@v1.49.0", "1.37", map[string]string{
			amd64Standard: "1.37-x86_64-v1.49.0", amd64Neuron: "1.37-x86_64-v1.49.0", arm64Standard: "1.37-arm64-v1.49.0",
			amd64Nvidia: "1.37-nvidia-x86_64-v1.49.0", arm64Nvidia: "1.37-nvidia-arm64-v1.49.0",
		}},
		{"al2@latest", "1.32", map[string]string{
			amd64Standard: "amazon-eks-node-1.32-v20261115", arm64Standard: "amazon-eks-arm64-node-1.32-v20261115",
			amd64Nvidia: "amazon-eks-gpu-node-1.32-v20261115", amd64Neuron: "amazon-eks-gpu-node-1.32-v20261115",
		}},
		{"al2@v20261101", "1.32", map[string]string{
			amd64Standard: "amazon-eks-node-1.32-v20261101", arm64Standard: "amazon-eks-arm64-node-1.32-v20261101",
			amd64Nvidia: "amazon-eks-gpu-node-1.32-v20261101", amd64Neuron: "amazon-eks-gpu-node-1.32-v20261101",
		}},
		{"windows2022@latest", "1.37", map[string]string{
			"kubernetes.io/os In windows, kubernetes.io/arch In amd64, node.kubernetes.io/windows-build In 10.0.20348": "Windows_Server-2022-English-Core-EKS_Optimized-1.37",
		}},
		{"windows2019@latest", "1.32", map[string]string{
			"kubernetes.io/os In windows, kubernetes.io/arch In amd64, node.kubernetes.io/windows-build In 10.0.17763": "Windows_Server-2019-English-Core-EKS_Optimized-1.32",
		}},
	} {
		t.Run(tc.alias, func(t *testing.T) {
			nc := class("c", alias(tc.alias))
			e.resolve(t, tc.k8s, nc)
			if c := condition(nc, awsv1.ConditionTypeAMIsReady); c.Status != "True" {
				t.Fatalf("AMIsReady %s: %s", c.Status, c.Message)
			}
			got := map[string]string{}
			for _, ami := range nc.Status.AMIs {
				got[reqString(ami.Requirements)] = ami.Name
			}
			if len(got) != len(nc.Status.AMIs) {
				t.Errorf("two AMIs with the same requirements: %+v", nc.Status.AMIs)
			}
			for reqs, name := range tc.want {
				if !strings.Contains(got[reqs], name) {
					t.Errorf("AMI for %q is %q, want one named like %q", reqs, got[reqs], name)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("%d AMIs, want %d: %v", len(got), len(tc.want), got)
			}
		})
	}
}

// Aliases a Kubernetes version has no AMIs for are refused with the reason, and a release
// that does not exist names the SSM parameters that were not found.
func TestAliasesThatCannotResolveSayWhy(t *testing.T) {
	e := newEndpoint(t, awsapi.Options{})
	for _, tc := range []struct{ alias, k8s, reason, message string }{
		{"al2@latest", "1.37", ReasonUnsupportedAlias, "AL2 AMIs are not published for Kubernetes 1.37"},
		{"windows2025@latest", "1.32", ReasonUnsupportedAlias, "Windows Server 2025 AMIs are published from Kubernetes 1.35"},
		{"al2023@v19990101", "1.37", ReasonAMINotFound, "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v19990101/image_id"},
		{"bottlerocket@latest", "1.10", ReasonAMINotFound, "no AMIs for alias bottlerocket@latest on Kubernetes 1.10"},
	} {
		nc := class("c", alias(tc.alias))
		e.resolve(t, tc.k8s, nc)
		c := condition(nc, awsv1.ConditionTypeAMIsReady)
		if c.Status != "False" || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
			t.Errorf("%s on %s: %s %s %q, want False %s containing %q", tc.alias, tc.k8s, c.Status, c.Reason, c.Message, tc.reason, tc.message)
		}
		if ready := condition(nc, awsv1.ConditionTypeReady); ready.Status != "False" || !strings.Contains(ready.Message, "AMIsReady") {
			t.Errorf("%s: Ready %s %q", tc.alias, ready.Status, ready.Message)
		}
	}
}

// Terms by ID, name (with wildcards), owner and tags select the account's images; the newest
// comes first, a deprecated one is flagged and loses to one that is not, and one image is kept
// per set of requirements (here, per architecture).
func TestAMITermsByIDNameOwnerAndTags(t *testing.T) {
	e := newEndpoint(t, awsapi.Options{})
	for _, img := range []awsapi.Image{
		{ID: "ami-0000000000000a001", Name: "golden-2026-11-20", Created: epoch.Add(-10 * 24 * time.Hour), Tags: map[string]string{"team": "ml", "golden": "yes"}},
		{ID: "ami-0000000000000a002", Name: "golden-2026-11-25", Created: epoch.Add(-5 * 24 * time.Hour), Tags: map[string]string{"team": "ml"}, Deprecation: epoch.Add(-time.Hour)},
		{ID: "ami-0000000000000a003", Name: "golden-arm-2026-11-01", Arch: "arm64", Created: epoch.Add(-30 * 24 * time.Hour), Tags: map[string]string{"team": "web"}},
		{ID: "ami-0000000000000a004", Name: "golden-2026-11-10", Owner: "999988887777", Created: epoch.Add(-20 * 24 * time.Hour), Tags: map[string]string{"team": "ml"}},
	} {
		if err := e.s.AddImage(img); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(nc *awsv1.EC2NodeClass) []string {
		var out []string
		for _, a := range nc.Status.AMIs {
			s := a.ID
			if a.Deprecated {
				s += "(deprecated)"
			}
			out = append(out, s)
		}
		return out
	}
	family := awsv1.AMIFamilyAL2023
	for _, tc := range []struct {
		name  string
		terms []awsv1.AMISelectorTerm
		want  []string
	}{
		// A name alone is looked up among the account's and Amazon's images only.
		{"name wildcard", []awsv1.AMISelectorTerm{{Name: "golden-2026-*"}}, []string{"ami-0000000000000a001"}},
		{"name and another owner", []awsv1.AMISelectorTerm{{Name: "golden-*", Owner: "999988887777"}}, []string{"ami-0000000000000a004"}},
		// Per architecture the newest non-deprecated image is kept.
		{"tag wildcard", []awsv1.AMISelectorTerm{{Tags: map[string]string{"team": "*"}}}, []string{"ami-0000000000000a001", "ami-0000000000000a003"}},
		{"tag", []awsv1.AMISelectorTerm{{Tags: map[string]string{"golden": "yes"}}}, []string{"ami-0000000000000a001"}},
		{"deprecated alone", []awsv1.AMISelectorTerm{{ID: "ami-0000000000000a002"}}, []string{"ami-0000000000000a002(deprecated)"}},
		{"ids", []awsv1.AMISelectorTerm{{ID: "ami-0000000000000a003"}, {ID: "ami-0000000000000a001"}}, []string{"ami-0000000000000a001", "ami-0000000000000a003"}},
	} {
		nc := class("c", tc.terms...)
		nc.Spec.AMIFamily = &family
		e.resolve(t, "1.37", nc)
		if got := ids(nc); !slices.Equal(got, tc.want) {
			t.Errorf("%s: AMIs %v, want %v (%s)", tc.name, got, tc.want, condition(nc, awsv1.ConditionTypeAMIsReady).Message)
		}
	}
	nc := class("c", awsv1.AMISelectorTerm{ID: "ami-0000000000000ffff"})
	nc.Spec.AMIFamily = &family
	e.resolve(t, "1.37", nc)
	if c := condition(nc, awsv1.ConditionTypeAMIsReady); c.Reason != ReasonAMINotFound || !strings.Contains(c.Message, "ami-0000000000000ffff") {
		t.Errorf("unknown ID: %s %q", c.Reason, c.Message)
	}
}
