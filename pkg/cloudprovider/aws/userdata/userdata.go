// Package userdata renders the user data that makes an EC2 instance join the cluster, for
// each AMI family of an EC2NodeClass, merged with the NodeClass's own spec.userData:
//
//   - AL2023: a nodeadm NodeConfig (application/node.eks.aws) in a MIME multipart, after the
//     user's parts (a MIME document's parts, or a plain NodeConfig or shell script as one part).
//   - Bottlerocket: TOML settings; the user's TOML is the base and tenon's cluster, label,
//     taint and kubelet settings overwrite the keys they name.
//   - AL2: a bootstrap.sh shell script in a MIME multipart, after the user's parts.
//   - Custom: the user's user data verbatim.
//
// Rendering is pure: the same input gives the same bytes, so launch templates keyed by the
// rendered user data are reused.
package userdata

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
)

// Cluster is what a node needs to find and trust the API server.
type Cluster struct {
	Name string
	// Endpoint is the API server's URL.
	Endpoint string
	// CABundle is the cluster's CA certificate bundle, base64-encoded PEM.
	CABundle string
	// ServiceCIDR is the cluster's service IP range (nodeadm's cidr).
	ServiceCIDR string
}

// Node is what one kind of node registers with.
type Node struct {
	// Labels are the node's labels (--node-labels).
	Labels map[string]string
	// Taints are the taints it registers with (the unregistered taint among them).
	Taints []corev1.Taint
	// Kubelet is the NodeClass's kubelet configuration (nil for none).
	Kubelet *awsv1.KubeletConfiguration
	// UserData is the NodeClass's spec.userData ("" for none).
	UserData string
}

// Render returns the user data (not base64-encoded) for an AMI family.
func Render(family string, c Cluster, n Node) (string, error) {
	switch family {
	case awsv1.AMIFamilyAL2023:
		return al2023(c, n)
	case awsv1.AMIFamilyBottlerocket:
		return bottlerocket(c, n)
	case awsv1.AMIFamilyAL2:
		return al2(c, n)
	case awsv1.AMIFamilyCustom:
		return n.UserData, nil
	}
	return "", fmt.Errorf("user data for AMI family %q is not supported by tenon (AL2023, Bottlerocket, AL2 and Custom are)", family)
}

// kubeletLabels returns the labels a kubelet may set on its own Node, sorted by key: the
// kubelet refuses to start with labels in the kubernetes.io and k8s.io namespaces other than
// the ones it is allowed (node.kubernetes.io/, kubelet.kubernetes.io/ and a few well-known
// ones), so those are left for tenon to sync after registration.
func kubeletLabels(labels map[string]string) []string {
	keys := slices.Sorted(maps.Keys(labels))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if !kubeletMaySet(k) {
			continue
		}
		out = append(out, k+"="+labels[k])
	}
	return out
}

func kubeletMaySet(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		return true
	}
	restricted := func(d string) bool {
		return d == "kubernetes.io" || strings.HasSuffix(d, ".kubernetes.io") || d == "k8s.io" || strings.HasSuffix(d, ".k8s.io")
	}
	if !restricted(domain) {
		return true
	}
	switch domain {
	case "node.kubernetes.io", "kubelet.kubernetes.io":
		return true
	}
	switch key {
	case corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelOSStable, corev1.LabelArchStable, corev1.LabelHostname:
		return true
	}
	return false
}

// taintFlag is a taint as --register-with-taints spells it: key=value:Effect.
func taintFlag(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// sortedTaints returns taints ordered by key, value and effect.
func sortedTaints(ts []corev1.Taint) []corev1.Taint {
	out := slices.Clone(ts)
	slices.SortFunc(out, func(a, b corev1.Taint) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := strings.Compare(a.Value, b.Value); c != 0 {
			return c
		}
		return strings.Compare(string(a.Effect), string(b.Effect))
	})
	return out
}

// reservedFlag renders a reservation map as kubelet flag text: cpu=100m,memory=1Gi.
func reservedFlag(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

// evictionFlag renders an eviction map as kubelet flag text: memory.available<5%.
func evictionFlag(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "<" + m[k]
	}
	return strings.Join(parts, ",")
}

// clusterDNS is the node's DNS server: the kubelet configuration's first clusterDNS, else the
// tenth address of the service CIDR (where EKS puts kube-dns), else "" (the AMI decides).
func clusterDNS(c Cluster, n Node) string {
	if n.Kubelet != nil && len(n.Kubelet.ClusterDNS) > 0 {
		return n.Kubelet.ClusterDNS[0]
	}
	prefix, err := netip.ParsePrefix(c.ServiceCIDR)
	if err != nil {
		return ""
	}
	addr := prefix.Masked().Addr()
	for range 10 {
		addr = addr.Next()
	}
	if !prefix.Contains(addr) {
		return ""
	}
	return addr.String()
}
