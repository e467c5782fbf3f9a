package userdata

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// nodeConfig is the part of nodeadm's NodeConfig (node.eks.aws/v1alpha1) tenon writes.
type nodeConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Spec       nodeConfigSpec `json:"spec"`
}

type nodeConfigSpec struct {
	Cluster nodeConfigCluster `json:"cluster"`
	Kubelet nodeConfigKubelet `json:"kubelet"`
}

type nodeConfigCluster struct {
	Name                 string `json:"name"`
	APIServerEndpoint    string `json:"apiServerEndpoint"`
	CertificateAuthority string `json:"certificateAuthority"`
	CIDR                 string `json:"cidr,omitempty"`
}

type nodeConfigKubelet struct {
	Config map[string]any `json:"config,omitempty"`
	Flags  []string       `json:"flags,omitempty"`
}

// al2023 renders a NodeConfig after the user's parts.
func al2023(c Cluster, n Node) (string, error) {
	user, err := userParts(n.UserData, func(s string) string {
		if looksLikeNodeConfig(s) {
			return contentTypeNodeadm
		}
		return contentTypeShell
	})
	if err != nil {
		return "", err
	}
	nc := nodeConfig{
		APIVersion: "node.eks.aws/v1alpha1", Kind: "NodeConfig",
		Spec: nodeConfigSpec{
			Cluster: nodeConfigCluster{Name: c.Name, APIServerEndpoint: c.Endpoint, CertificateAuthority: c.CABundle, CIDR: c.ServiceCIDR},
			Kubelet: nodeConfigKubelet{Config: kubeletConfig(n)},
		},
	}
	if labels := kubeletLabels(n.Labels); len(labels) > 0 {
		nc.Spec.Kubelet.Flags = append(nc.Spec.Kubelet.Flags, "--node-labels="+strings.Join(labels, ","))
	}
	b, err := yaml.Marshal(nc)
	if err != nil {
		return "", fmt.Errorf("rendering the NodeConfig: %w", err)
	}
	return writeMIME(append(user, part{contentType: contentTypeNodeadm, body: "# tenon's NodeConfig\n" + string(b)})), nil
}

// kubeletConfig is the KubeletConfiguration fields a node needs from the NodeClass, with the
// taints it registers with.
func kubeletConfig(n Node) map[string]any {
	cfg := map[string]any{}
	if k := n.Kubelet; k != nil {
		if len(k.ClusterDNS) > 0 {
			cfg["clusterDNS"] = k.ClusterDNS
		}
		if k.MaxPods != nil {
			cfg["maxPods"] = *k.MaxPods
		}
		if k.PodsPerCore != nil {
			cfg["podsPerCore"] = *k.PodsPerCore
		}
		if len(k.SystemReserved) > 0 {
			cfg["systemReserved"] = k.SystemReserved
		}
		if len(k.KubeReserved) > 0 {
			cfg["kubeReserved"] = k.KubeReserved
		}
		if len(k.EvictionHard) > 0 {
			cfg["evictionHard"] = k.EvictionHard
		}
		if len(k.EvictionSoft) > 0 {
			cfg["evictionSoft"] = k.EvictionSoft
		}
		if len(k.EvictionSoftGracePeriod) > 0 {
			periods := map[string]string{}
			for s, d := range k.EvictionSoftGracePeriod {
				periods[s] = d.Duration.String()
			}
			cfg["evictionSoftGracePeriod"] = periods
		}
		if k.EvictionMaxPodGracePeriod != nil {
			cfg["evictionMaxPodGracePeriod"] = *k.EvictionMaxPodGracePeriod
		}
		if k.ImageGCHighThresholdPercent != nil {
			cfg["imageGCHighThresholdPercent"] = *k.ImageGCHighThresholdPercent
		}
		if k.ImageGCLowThresholdPercent != nil {
			cfg["imageGCLowThresholdPercent"] = *k.ImageGCLowThresholdPercent
		}
		if k.CPUCFSQuota != nil {
			cfg["cpuCFSQuota"] = *k.CPUCFSQuota
		}
	}
	if len(n.Taints) > 0 {
		var taints []map[string]string
		for _, t := range sortedTaints(n.Taints) {
			m := map[string]string{"key": t.Key, "effect": string(t.Effect)}
			if t.Value != "" {
				m["value"] = t.Value
			}
			taints = append(taints, m)
		}
		cfg["registerWithTaints"] = taints
	}
	return cfg
}

// looksLikeNodeConfig reports whether plain user data is a nodeadm NodeConfig document.
func looksLikeNodeConfig(s string) bool {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(s), &head); err != nil {
		return false
	}
	return head.Kind == "NodeConfig" && strings.HasPrefix(head.APIVersion, "node.eks.aws/")
}
