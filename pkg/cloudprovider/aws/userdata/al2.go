package userdata

import (
	"fmt"
	"strings"
)

// al2 renders an /etc/eks/bootstrap.sh script after the user's parts.
func al2(c Cluster, n Node) (string, error) {
	user, err := userParts(n.UserData, func(string) string { return contentTypeShell })
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash -xe\n")
	b.WriteString("exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n")
	fmt.Fprintf(&b, "/etc/eks/bootstrap.sh %s --apiserver-endpoint %s --b64-cluster-ca %s", shellQuote(c.Name), shellQuote(c.Endpoint), shellQuote(c.CABundle))
	k := n.Kubelet
	if dns := clusterDNS(c, n); dns != "" {
		fmt.Fprintf(&b, " \\\n--dns-cluster-ip %s", shellQuote(dns))
	}
	var args []string
	if labels := kubeletLabels(n.Labels); len(labels) > 0 {
		args = append(args, fmt.Sprintf("--node-labels=%q", strings.Join(labels, ",")))
	}
	if len(n.Taints) > 0 {
		var ts []string
		for _, t := range sortedTaints(n.Taints) {
			ts = append(ts, taintFlag(t))
		}
		args = append(args, fmt.Sprintf("--register-with-taints=%q", strings.Join(ts, ",")))
	}
	if k != nil {
		if k.MaxPods != nil {
			b.WriteString(" \\\n--use-max-pods false")
			args = append(args, fmt.Sprintf("--max-pods=%d", *k.MaxPods))
		}
		if k.PodsPerCore != nil {
			args = append(args, fmt.Sprintf("--pods-per-core=%d", *k.PodsPerCore))
		}
		if len(k.SystemReserved) > 0 {
			args = append(args, "--system-reserved="+reservedFlag(k.SystemReserved))
		}
		if len(k.KubeReserved) > 0 {
			args = append(args, "--kube-reserved="+reservedFlag(k.KubeReserved))
		}
		if len(k.EvictionHard) > 0 {
			args = append(args, "--eviction-hard="+evictionFlag(k.EvictionHard))
		}
		if len(k.EvictionSoft) > 0 {
			args = append(args, "--eviction-soft="+evictionFlag(k.EvictionSoft))
		}
		if len(k.EvictionSoftGracePeriod) > 0 {
			periods := map[string]string{}
			for s, d := range k.EvictionSoftGracePeriod {
				periods[s] = d.Duration.String()
			}
			args = append(args, "--eviction-soft-grace-period="+reservedFlag(periods))
		}
		if k.EvictionMaxPodGracePeriod != nil {
			args = append(args, fmt.Sprintf("--eviction-max-pod-grace-period=%d", *k.EvictionMaxPodGracePeriod))
		}
		if k.ImageGCHighThresholdPercent != nil {
			args = append(args, fmt.Sprintf("--image-gc-high-threshold=%d", *k.ImageGCHighThresholdPercent))
		}
		if k.ImageGCLowThresholdPercent != nil {
			args = append(args, fmt.Sprintf("--image-gc-low-threshold=%d", *k.ImageGCLowThresholdPercent))
		}
		if k.CPUCFSQuota != nil {
			args = append(args, fmt.Sprintf("--cpu-cfs-quota=%t", *k.CPUCFSQuota))
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(&b, " \\\n--kubelet-extra-args %s", shellQuote(strings.Join(args, " ")))
	}
	b.WriteString("\n")
	return writeMIME(append(user, part{contentType: contentTypeShell, body: b.String()})), nil
}

// shellQuote quotes s for a POSIX shell with single quotes.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }
