package v1

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DoNotDisrupt is what a pod's karpenter.sh/do-not-disrupt annotation asks for at one moment.
// The value "true" protects the pod for as long as the annotation stays; a positive Go duration
// ("30m", "1h30m") protects it for that long after the pod started (status.startTime), and
// for as long as it has not started. Any other value protects nothing and is reported in Err,
// as Karpenter treats it.
//
// +kubebuilder:object:generate=false
type DoNotDisrupt struct {
	// Active says whether the annotation protects the pod now.
	Active bool
	// Until is when a duration's protection runs out; zero when the protection has no end
	// ("true", or a pod not started yet) or when there is none.
	Until time.Time
	// Err describes an annotation value that is neither "true" nor a positive duration.
	Err error
}

// PodDoNotDisrupt reads pod's karpenter.sh/do-not-disrupt annotation at now. It is the one
// reading of that annotation: the disruption decision and the drain both use it.
func PodDoNotDisrupt(pod *corev1.Pod, now time.Time) DoNotDisrupt {
	v, ok := pod.Annotations[DoNotDisruptAnnotationKey]
	if !ok {
		return DoNotDisrupt{}
	}
	if v == "true" {
		return DoNotDisrupt{Active: true}
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return DoNotDisrupt{Err: fmt.Errorf("%s=%q is neither \"true\" nor a duration", DoNotDisruptAnnotationKey, v)}
	case d <= 0:
		return DoNotDisrupt{Err: fmt.Errorf("%s=%q: the duration must be positive", DoNotDisruptAnnotationKey, v)}
	}
	if pod.Status.StartTime == nil {
		return DoNotDisrupt{Active: true} // the duration counts from a start that has not come
	}
	until := pod.Status.StartTime.Add(d)
	if !now.Before(until) {
		return DoNotDisrupt{}
	}
	return DoNotDisrupt{Active: true, Until: until}
}
