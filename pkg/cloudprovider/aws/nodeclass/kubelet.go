package nodeclass

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
)

// ReasonInvalidKubeletConfiguration: spec.kubelet holds a value the kubelet would refuse.
const ReasonInvalidKubeletConfiguration = "InvalidKubeletConfiguration"

// kubeletErrors lists the values of spec.kubelet the schema cannot check (its maps hold
// strings) that the kubelet would refuse: reservations that are not quantities (pid: a
// whole number), eviction thresholds that are neither quantities nor percentages.
func kubeletErrors(k *awsv1.KubeletConfiguration) []string {
	if k == nil {
		return nil
	}
	var errs []string
	for _, res := range []struct {
		field string
		m     map[string]string
	}{{"systemReserved", k.SystemReserved}, {"kubeReserved", k.KubeReserved}} {
		for _, key := range sortedKeys(res.m) {
			v := res.m[key]
			if key == "pid" {
				if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
					errs = append(errs, fmt.Sprintf("spec.kubelet.%s[pid]: %q is not a whole number of processes", res.field, v))
				}
				continue
			}
			if q, err := resource.ParseQuantity(v); err != nil || q.Sign() < 0 {
				errs = append(errs, fmt.Sprintf("spec.kubelet.%s[%s]: %q is not a quantity", res.field, key, v))
			}
		}
	}
	for _, ev := range []struct {
		field string
		m     map[string]string
	}{{"evictionHard", k.EvictionHard}, {"evictionSoft", k.EvictionSoft}} {
		for _, key := range sortedKeys(ev.m) {
			if v := ev.m[key]; !threshold(v) {
				errs = append(errs, fmt.Sprintf("spec.kubelet.%s[%s]: %q is neither a quantity nor a percentage", ev.field, key, v))
			}
		}
	}
	return errs
}

// threshold reports whether v is an eviction threshold: a percentage in [0, 100] or a
// non-negative quantity.
func threshold(v string) bool {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		return err == nil && f >= 0 && f <= 100
	}
	q, err := resource.ParseQuantity(v)
	return err == nil && q.Sign() >= 0
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
