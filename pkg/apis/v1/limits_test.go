package v1_test

import (
	"strings"
	"testing"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resources(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestLimitsExceededBy(t *testing.T) {
	limits := v1.Limits(resources("cpu", "100", "memory", "400Gi", "nodes", "10"))
	for _, tc := range []struct {
		name  string
		limit v1.Limits
		usage corev1.ResourceList
		want  string // substring of the error; empty for none
	}{
		{"no limits", nil, resources("cpu", "1000"), ""},
		{"below", limits, resources("cpu", "99", "memory", "1Gi"), ""},
		{"at the limit", limits, resources("cpu", "100000m", "nodes", "10"), ""},
		{"an unlimited resource", limits, resources("nvidia.com/gpu", "64"), ""},
		{"cpu above", limits, resources("cpu", "100001m"), "cpu usage 100001m exceeds the limit 100"},
		{"nodes above", limits, resources("nodes", "11"), "nodes usage 11 exceeds the limit 10"},
		{"first in name order", limits, resources("nodes", "11", "cpu", "101"), "cpu usage"},
	} {
		err := tc.limit.ExceededBy(tc.usage)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
