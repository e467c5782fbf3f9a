package userdata

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// bottlerocket renders TOML settings: the user's document with tenon's settings written over
// the keys they name, so that the cluster's name, endpoint and CA, the node's labels and
// taints and the kubelet settings are tenon's whatever the user wrote.
func bottlerocket(c Cluster, n Node) (string, error) {
	doc := map[string]any{}
	if strings.TrimSpace(n.UserData) != "" {
		if _, err := toml.Decode(n.UserData, &doc); err != nil {
			return "", fmt.Errorf("reading the Bottlerocket user data as TOML: %w", err)
		}
	}
	settings, err := table(doc, "settings")
	if err != nil {
		return "", err
	}
	k8s, err := table(settings, "kubernetes")
	if err != nil {
		return "", err
	}
	k8s["cluster-name"] = c.Name
	k8s["api-server"] = c.Endpoint
	k8s["cluster-certificate"] = c.CABundle
	if dns := clusterDNS(c, n); dns != "" {
		k8s["cluster-dns-ip"] = dns
	}
	if len(n.Labels) > 0 {
		labels, err := table(k8s, "node-labels")
		if err != nil {
			return "", err
		}
		for _, kv := range kubeletLabels(n.Labels) {
			key, value, _ := strings.Cut(kv, "=")
			labels[key] = value
		}
	}
	if len(n.Taints) > 0 {
		taints, err := table(k8s, "node-taints")
		if err != nil {
			return "", err
		}
		// Tenon's taints replace the user's of the same key.
		for _, t := range n.Taints {
			delete(taints, t.Key)
		}
		for _, t := range sortedTaints(n.Taints) {
			prev, _ := taints[t.Key].([]any)
			taints[t.Key] = append(prev, t.Value+":"+string(t.Effect))
		}
	}
	if k := n.Kubelet; k != nil {
		if k.MaxPods != nil {
			k8s["max-pods"] = int64(*k.MaxPods)
		}
		if k.PodsPerCore != nil {
			k8s["pods-per-core"] = int64(*k.PodsPerCore)
		}
		setStrings(k8s, "system-reserved", k.SystemReserved)
		setStrings(k8s, "kube-reserved", k.KubeReserved)
		setStrings(k8s, "eviction-hard", k.EvictionHard)
		setStrings(k8s, "eviction-soft", k.EvictionSoft)
		if len(k.EvictionSoftGracePeriod) > 0 {
			periods := map[string]string{}
			for s, d := range k.EvictionSoftGracePeriod {
				periods[s] = d.Duration.String()
			}
			setStrings(k8s, "eviction-soft-grace-period", periods)
		}
		if k.EvictionMaxPodGracePeriod != nil {
			k8s["eviction-max-pod-grace-period"] = int64(*k.EvictionMaxPodGracePeriod)
		}
		if k.ImageGCHighThresholdPercent != nil {
			k8s["image-gc-high-threshold-percent"] = int64(*k.ImageGCHighThresholdPercent)
		}
		if k.ImageGCLowThresholdPercent != nil {
			k8s["image-gc-low-threshold-percent"] = int64(*k.ImageGCLowThresholdPercent)
		}
		if k.CPUCFSQuota != nil {
			k8s["cpu-cfs-quota-enforced"] = *k.CPUCFSQuota
		}
	}
	var b bytes.Buffer
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(doc); err != nil {
		return "", fmt.Errorf("rendering the Bottlerocket settings: %w", err)
	}
	return b.String(), nil
}

// table returns the sub-table key of m, making it when absent.
func table(m map[string]any, key string) (map[string]any, error) {
	switch v := m[key].(type) {
	case nil:
		t := map[string]any{}
		m[key] = t
		return t, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("the Bottlerocket user data's %q is a %T, not a table", key, v)
	}
}

// setStrings writes a string map as a sub-table, over the user's entries of the same keys.
func setStrings(m map[string]any, key string, values map[string]string) {
	if len(values) == 0 {
		return
	}
	t, ok := m[key].(map[string]any)
	if !ok {
		t = map[string]any{}
		m[key] = t
	}
	for k, v := range values {
		t[k] = v
	}
}
