package userdata

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

var cluster = Cluster{Name: "tenon-test", Endpoint: "https://ABCDEF.gr7.us-east-1.eks.amazonaws.com", CABundle: "Y2EtYnVuZGxlCg==", ServiceCIDR: "10.100.0.0/16"}

// plainNode is a node with only what every claim carries.
func plainNode() Node {
	return Node{
		Labels: map[string]string{apisv1.NodePoolLabelKey: "default", "karpenter.k8s.aws/ec2nodeclass": "default", apisv1.CapacityTypeLabelKey: "on-demand"},
		Taints: []corev1.Taint{apisv1.UnregisteredNoExecuteTaint},
	}
}

// richNode adds labels (one the kubelet may not set itself), taints and kubelet settings.
func richNode() Node {
	n := plainNode()
	n.Labels["team"] = "ml"
	n.Labels["node-role.kubernetes.io/worker"] = ""
	n.Taints = append(n.Taints, corev1.Taint{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}, corev1.Taint{Key: "dedicated", Effect: corev1.TaintEffectNoExecute})
	n.Kubelet = &awsv1.KubeletConfiguration{
		ClusterDNS: []string{"10.0.100.10"}, MaxPods: ptr.To[int32](58), PodsPerCore: ptr.To[int32](4),
		SystemReserved:            map[string]string{"cpu": "100m", "memory": "100Mi"},
		KubeReserved:              map[string]string{"cpu": "200m", "memory": "1Gi", "ephemeral-storage": "1Gi"},
		EvictionHard:              map[string]string{"memory.available": "5%", "nodefs.available": "10%"},
		EvictionSoft:              map[string]string{"memory.available": "10%"},
		EvictionSoftGracePeriod:   map[string]metav1.Duration{"memory.available": {Duration: 2 * time.Minute}},
		EvictionMaxPodGracePeriod: ptr.To[int32](60), ImageGCHighThresholdPercent: ptr.To[int32](85), ImageGCLowThresholdPercent: ptr.To[int32](80),
		CPUCFSQuota: ptr.To(true),
	}
	return n
}

func withUserData(n Node, ud string) Node { n.UserData = ud; return n }

const (
	userShell      = "#!/bin/bash\necho \"Hello from the user\"\n"
	userNodeConfig = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n"
	userMIME       = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho one\n\n--BOUNDARY\nContent-Type: application/node.eks.aws\n\n" + userNodeConfig + "\n--BOUNDARY--\n"
	userTOML       = "[settings.kubernetes]\ncluster-name = 'replace-me'\napi-server = 'replace-me'\nmax-pods = 999\n\"unknown-setting\" = \"kept\"\n\n[settings.kubernetes.node-labels]\n\"custom\" = \"label\"\n\"karpenter.sh/nodepool\" = \"overridden\"\n\n[settings.kubernetes.node-taints]\n\"dedicated\" = [\"user:NoSchedule\"]\n\"user-taint\" = [\"x:NoSchedule\"]\n\n[settings.ntp]\ntime-servers = [\"169.254.169.123\"]\n"
)

func TestGolden(t *testing.T) {
	cases := []struct {
		name   string
		family string
		node   Node
	}{
		{"al2023_plain", awsv1.AMIFamilyAL2023, plainNode()},
		{"al2023_kubelet_taints_labels", awsv1.AMIFamilyAL2023, richNode()},
		{"al2023_user_shell", awsv1.AMIFamilyAL2023, withUserData(plainNode(), userShell)},
		{"al2023_user_nodeconfig", awsv1.AMIFamilyAL2023, withUserData(plainNode(), userNodeConfig)},
		{"al2023_user_mime", awsv1.AMIFamilyAL2023, withUserData(richNode(), userMIME)},
		{"bottlerocket_plain", awsv1.AMIFamilyBottlerocket, plainNode()},
		{"bottlerocket_kubelet_taints_labels", awsv1.AMIFamilyBottlerocket, richNode()},
		{"bottlerocket_user_toml", awsv1.AMIFamilyBottlerocket, withUserData(richNode(), userTOML)},
		{"al2_plain", awsv1.AMIFamilyAL2, plainNode()},
		{"al2_kubelet_taints_labels", awsv1.AMIFamilyAL2, richNode()},
		{"al2_user_shell", awsv1.AMIFamilyAL2, withUserData(plainNode(), userShell)},
		{"al2_user_mime", awsv1.AMIFamilyAL2, withUserData(plainNode(), userMIME)},
		{"custom_verbatim", awsv1.AMIFamilyCustom, withUserData(richNode(), userShell)},
		{"custom_empty", awsv1.AMIFamilyCustom, richNode()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render(tc.family, cluster, tc.node)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := Render(tc.family, cluster, tc.node)
			if again != got {
				t.Fatal("rendering twice gave different bytes")
			}
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("user data differs from %s (run with -update if intended):\n%s", path, got)
			}
		})
	}
}

func TestBottlerocketClusterSettingsWinOverTheUsers(t *testing.T) {
	got, err := Render(awsv1.AMIFamilyBottlerocket, cluster, withUserData(richNode(), userTOML))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`cluster-name = "tenon-test"`, "max-pods = 58", `unknown-setting = "kept"`, `"karpenter.sh/nodepool" = "default"`, `dedicated = [":NoExecute"]`, `user-taint = ["x:NoSchedule"]`, "time-servers"} {
		if !strings.Contains(got, want) {
			t.Errorf("merged TOML lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "replace-me") || strings.Contains(got, "overridden") {
		t.Errorf("the user's cluster settings survived:\n%s", got)
	}
}

func TestKubeletRestrictedLabelsAreLeftOut(t *testing.T) {
	got, err := Render(awsv1.AMIFamilyAL2023, cluster, richNode())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "node-role.kubernetes.io") {
		t.Errorf("a label the kubelet may not set on itself is in --node-labels:\n%s", got)
	}
	if !strings.Contains(got, "team=ml") {
		t.Errorf("a free label is missing:\n%s", got)
	}
}

func TestBadUserDataIsAnError(t *testing.T) {
	for _, tc := range []struct{ family, ud string }{
		{awsv1.AMIFamilyBottlerocket, "[settings\nbroken"},
		{awsv1.AMIFamilyBottlerocket, "settings = 3\n"},
		{awsv1.AMIFamilyAL2023, "MIME-Version: 1.0\nContent-Type: text/plain\n\nhello\n"},
		{awsv1.AMIFamilyAL2, "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\nno boundary\n"},
		{awsv1.AMIFamilyWindows2022, ""},
	} {
		if _, err := Render(tc.family, cluster, withUserData(plainNode(), tc.ud)); err == nil {
			t.Errorf("%s user data %q: no error", tc.family, tc.ud)
		}
	}
}

func TestClusterDNSFromTheServiceCIDR(t *testing.T) {
	for cidr, want := range map[string]string{"10.100.0.0/16": "10.100.0.10", "172.20.0.0/16": "172.20.0.10", "fd00::/108": "fd00::a", "": "", "10.0.0.0/30": ""} {
		if got := clusterDNS(Cluster{ServiceCIDR: cidr}, Node{}); got != want {
			t.Errorf("clusterDNS(%q) = %q, want %q", cidr, got, want)
		}
	}
}
