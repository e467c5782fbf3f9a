package disruption

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// podRequests memoizes scheduling.PodRequests over one pass: the fingerprints, the idle prices
// and every capacity floor read the same pods, a floor many times over in a multi-node search.
type podRequests map[*corev1.Pod]podRequest

type podRequest struct {
	r   scheduling.Resources
	err error
}

func (m podRequests) of(p *corev1.Pod) (scheduling.Resources, error) {
	if e, ok := m[p]; ok {
		return e.r, e.err
	}
	r, err := scheduling.PodRequests(p)
	m[p] = podRequest{r, err}
	return r, err
}

// all returns the requests of pods in buf's memory, and false when one of them cannot be read.
func (m podRequests) all(pods []*corev1.Pod, buf []scheduling.Resources) ([]scheduling.Resources, bool) {
	out := buf[:0]
	for _, p := range pods {
		r, err := m.of(p)
		if err != nil {
			return out, false
		}
		out = append(out, r)
	}
	return out, true
}
