package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

const wildcardIP = "0.0.0.0"

// HostPort is one host port a pod binds: an IP (0.0.0.0 for every address), a protocol and a port.
type HostPort struct {
	IP       string
	Protocol corev1.Protocol
	Port     int32
}

func (p HostPort) String() string { return fmt.Sprintf("%s/%s:%d", p.Protocol, p.IP, p.Port) }

// Conflicts reports whether two host ports cannot be bound on the same node: same protocol and
// port, and the same IP or either one the wildcard.
func (p HostPort) Conflicts(o HostPort) bool {
	return p.Port == o.Port && p.Protocol == o.Protocol &&
		(p.IP == o.IP || p.IP == wildcardIP || o.IP == wildcardIP)
}

// PodHostPorts returns the host ports a pod binds for its whole life, as kube-scheduler counts
// them: those of its containers and of its restartable init containers, with the IP defaulting
// to the wildcard and the protocol to TCP.
func PodHostPorts(pod *corev1.Pod) []HostPort {
	var out []HostPort
	add := func(c *corev1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := HostPort{IP: p.HostIP, Protocol: p.Protocol, Port: p.HostPort}
			if hp.IP == "" {
				hp.IP = wildcardIP
			}
			if hp.Protocol == "" {
				hp.Protocol = corev1.ProtocolTCP
			}
			out = append(out, hp)
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}

// HostPortConflict returns the first port in want that conflicts with a port in used.
func HostPortConflict(used, want []HostPort) (HostPort, bool) {
	for _, w := range want {
		for _, u := range used {
			if w.Conflicts(u) {
				return w, true
			}
		}
	}
	return HostPort{}, false
}
