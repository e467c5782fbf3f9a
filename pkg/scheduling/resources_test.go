package scheduling

import (
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"pgregory.net/rapid"
)

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func container(name string, requests corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests}}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecar := container("sidecar", rl("cpu", "200m", "memory", "100Mi"))
	sidecar.RestartPolicy = &always
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		{"sum of containers", corev1.PodSpec{Containers: []corev1.Container{
			container("a", rl("cpu", "1", "memory", "1Gi")), container("b", rl("cpu", "500m", "nvidia.com/gpu", "1")),
		}}, rl("cpu", "1500m", "memory", "1Gi", "nvidia.com/gpu", "1", "pods", "1")},
		{"init container peak wins", corev1.PodSpec{
			InitContainers: []corev1.Container{container("init", rl("cpu", "4"))},
			Containers:     []corev1.Container{container("a", rl("cpu", "1", "memory", "1Gi"))},
		}, rl("cpu", "4", "memory", "1Gi", "pods", "1")},
		{"sidecars add to the steady state and to later init containers", corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar, container("init", rl("cpu", "1"))},
			Containers:     []corev1.Container{container("a", rl("cpu", "500m"))},
		}, rl("cpu", "1200m", "memory", "100Mi", "pods", "1")},
		{"overhead is added", corev1.PodSpec{
			Containers: []corev1.Container{container("a", rl("cpu", "1"))},
			Overhead:   rl("cpu", "250m", "memory", "120Mi"),
		}, rl("cpu", "1250m", "memory", "120Mi", "pods", "1")},
		{"pod-level resources override containers", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: rl("cpu", "3", "memory", "2Gi")},
			Containers: []corev1.Container{container("a", rl("cpu", "1"))},
		}, rl("cpu", "3", "memory", "2Gi", "pods", "1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodRequests(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: tc.spec})
			if err != nil {
				t.Fatal(err)
			}
			if want := MustFromResourceList(tc.want); got != want {
				t.Errorf("PodRequests = %s, want %s", got, want)
			}
		})
	}
}

func TestResourcesArithmetic(t *testing.T) {
	a := MustFromResourceList(rl("cpu", "1500m", "memory", "2Gi", "pods", "1"))
	b := MustFromResourceList(rl("cpu", "500m", "memory", "1Gi", "nvidia.com/gpu", "2"))
	sum := a.Add(b)
	if sum[CPU] != 2000 || sum[Memory] != 3<<30 || sum[NvidiaGPU] != 2 || sum[Pods] != 1 {
		t.Errorf("Add = %s", sum)
	}
	if back := sum.Sub(b); back != a {
		t.Errorf("Sub = %s, want %s", back, a)
	}
	capacity := MustFromResourceList(rl("cpu", "2", "memory", "4Gi", "pods", "10", "nvidia.com/gpu", "1"))
	if sum.FitsIn(capacity) {
		t.Error("two GPUs must not fit one")
	}
	if got := sum.Exceeding(capacity); got != NvidiaGPU {
		t.Errorf("Exceeding = %d, want the GPU slot %d", got, NvidiaGPU)
	}
	if !a.FitsIn(capacity) || a.Exceeding(capacity) != -1 {
		t.Error("a fits the capacity")
	}
	if got := a.Scale(3); got[CPU] != 4500 {
		t.Errorf("Scale = %s", got)
	}
	round := MustFromResourceList(sum.ResourceList())
	if round != sum {
		t.Errorf("ResourceList round trip: %s != %s", round, sum)
	}
	if s := sum.String(); s != "cpu=2 memory=3Gi pods=1 nvidia.com/gpu=2" {
		t.Errorf("String = %q", s)
	}
}

func TestInternResource(t *testing.T) {
	i, err := InternResource("example.com/foo")
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := InternResource("example.com/foo"); j != i {
		t.Errorf("interning twice gave slots %d and %d", i, j)
	}
	if ResourceNameAt(i) != "example.com/foo" || i < numFixed {
		t.Errorf("slot %d holds %q", i, ResourceNameAt(i))
	}
	if k, ok := ResourceIndex(corev1.ResourceMemory); !ok || k != Memory {
		t.Errorf("memory slot = %d %v", k, ok)
	}
}

func TestUntoleratedTaint(t *testing.T) {
	gpu := corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	soft := corev1.Taint{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}
	exec := corev1.Taint{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoExecute}
	for _, tc := range []struct {
		name        string
		tolerations []corev1.Toleration
		taints      []corev1.Taint
		want        *corev1.Taint
	}{
		{"no taints", nil, nil, nil},
		{"prefer-no-schedule never blocks", nil, []corev1.Taint{soft}, nil},
		{"untolerated", nil, []corev1.Taint{soft, gpu}, &gpu},
		{"exists tolerates", []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}, []corev1.Taint{gpu}, nil},
		{"wrong value", []corev1.Toleration{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoExecute}}, []corev1.Taint{exec}, &exec},
		{"right value", []corev1.Toleration{{Key: "dedicated", Value: "ml"}}, []corev1.Taint{exec}, nil},
		{"wrong effect", []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, []corev1.Taint{gpu}, &gpu},
		{"tolerate everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, []corev1.Taint{gpu, exec}, nil},
	} {
		got := UntoleratedTaint(tc.tolerations, tc.taints)
		if (got == nil) != (tc.want == nil) || (got != nil && got.Key != tc.want.Key) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHostPorts(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "once", Ports: []corev1.ContainerPort{{HostPort: 9000}}},
			{Name: "sidecar", RestartPolicy: &always, Ports: []corev1.ContainerPort{{HostPort: 9100, Protocol: corev1.ProtocolUDP}}},
		},
		Containers: []corev1.Container{{Name: "a", Ports: []corev1.ContainerPort{{ContainerPort: 80}, {HostPort: 8080, HostIP: "10.0.0.1"}}}},
	}}
	got := PodHostPorts(pod)
	want := []HostPort{{"0.0.0.0", corev1.ProtocolUDP, 9100}, {"10.0.0.1", corev1.ProtocolTCP, 8080}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("PodHostPorts = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		a, b HostPort
		want bool
	}{
		{HostPort{"0.0.0.0", "TCP", 80}, HostPort{"10.0.0.1", "TCP", 80}, true},
		{HostPort{"10.0.0.2", "TCP", 80}, HostPort{"10.0.0.1", "TCP", 80}, false},
		{HostPort{"10.0.0.1", "TCP", 80}, HostPort{"10.0.0.1", "TCP", 80}, true},
		{HostPort{"0.0.0.0", "UDP", 80}, HostPort{"0.0.0.0", "TCP", 80}, false},
		{HostPort{"0.0.0.0", "TCP", 81}, HostPort{"0.0.0.0", "TCP", 80}, false},
	} {
		if got := tc.a.Conflicts(tc.b); got != tc.want || tc.b.Conflicts(tc.a) != tc.want {
			t.Errorf("%s vs %s: conflicts=%v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if p, ok := HostPortConflict(got, []HostPort{{"0.0.0.0", "TCP", 8080}}); !ok || p.Port != 8080 {
		t.Errorf("HostPortConflict missed the wildcard clash")
	}
}

// The one-container shortcut must agree with the general computation.
func TestPodRequestsShortcutAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		list := corev1.ResourceList{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, ResourceNvidiaGPU} {
			if rapid.Bool().Draw(t, "has-"+string(name)) {
				list[name] = *resource.NewScaledQuantity(rapid.Int64Range(0, 1<<40).Draw(t, "v"), resource.Scale(rapid.IntRange(-9, 3).Draw(t, "scale")))
			}
		}
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: list}}}}}
		got, err := PodRequests(pod)
		if err != nil {
			t.Fatal(err)
		}
		want, err := FromResourceList(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		want[Pods]++
		if got != want {
			t.Fatalf("shortcut %v, general %v", got, want)
		}
	})
}

func TestHugeQuantitiesSaturateInsteadOfWrapping(t *testing.T) {
	for _, tc := range []struct {
		name, amount string
		slot         int
		want         int64
		exact        bool
	}{
		{"cpu", "99999999999999999999999", CPU, Saturated, false},
		{"cpu", "1e16", CPU, Saturated, false}, // 1e19 millicores
		{"cpu", "9e15", CPU, 9e18, true},       // still fits
		{"memory", "1e30", Memory, Saturated, false},
		{"memory", "8Ei", Memory, Saturated, false}, // 2^63: one past the int64 maximum
		{"memory", "6Ei", Memory, 6 << 60, true},
		{"memory", "1.5", Memory, 2, true}, // rounded up
		{"cpu", "0.0001", CPU, 1, true},
	} {
		v, exact, err := Amount(tc.slot, resource.MustParse(tc.amount))
		if err != nil || v != tc.want || exact != tc.exact {
			t.Errorf("Amount(%s %s) = %d, %v, %v; want %d, %v", tc.name, tc.amount, v, exact, err, tc.want, tc.exact)
		}
	}
	if _, _, err := Amount(Memory, resource.MustParse("-1")); err == nil {
		t.Error("a negative amount must be an error")
	}
	if _, err := FromResourceList(rl("cpu", "-100m")); err == nil || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("negative cpu: error %v must name the resource", err)
	}
}

func TestPodRequestsSumsHugeContainersWithoutWrapping(t *testing.T) {
	// Two containers of 6Ei are 12Ei, more than an int64 holds: the sum saturates.
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Resources: corev1.ResourceRequirements{Requests: rl("memory", "6Ei")}},
		{Name: "b", Resources: corev1.ResourceRequirements{Requests: rl("memory", "6Ei")}},
	}}}
	r, err := PodRequests(pod)
	if err != nil || r[Memory] != Saturated {
		t.Fatalf("PodRequests = %s, %v; want memory saturated", r, err)
	}
	if s := r.String(); !strings.Contains(s, "memory=>") {
		t.Errorf("String = %q, want the saturated memory marked", s)
	}
	if s := FormatPodRequests(r, pod); s != "memory=12Ei pods=1" {
		t.Errorf("FormatPodRequests = %q, want the pod's own total", s)
	}
	// An init container larger than the containers' sum, and pod overhead on top.
	pod.Spec.Containers = pod.Spec.Containers[:1]
	pod.Spec.InitContainers = []corev1.Container{{Name: "i", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1e16")}}}
	pod.Spec.Overhead = rl("cpu", "1e16")
	if r, err = PodRequests(pod); err != nil || r[CPU] != Saturated || r[Memory] != 6<<60 {
		t.Fatalf("PodRequests = %s, %v; want cpu saturated, memory 6Ei", r, err)
	}
}

func TestResourcesArithmeticSaturates(t *testing.T) {
	var big, one Resources
	big[CPU], big[Memory] = Saturated, math.MaxInt64-1
	one[CPU], one[Memory] = 1, 5
	if s := big.Add(one); s[CPU] != Saturated || s[Memory] != Saturated {
		t.Errorf("Add = %v", s[:2])
	}
	var neg Resources
	neg[CPU] = math.MinInt64 + 1
	if d := neg.Sub(one); d[CPU] != math.MinInt64 {
		t.Errorf("Sub = %d, want the int64 minimum", d[CPU])
	}
	if d := one.Sub(big); d[CPU] != -Saturated+1 || d[Memory] != 5-(math.MaxInt64-1) {
		t.Errorf("Sub = %v", d[:2])
	}
	if p := one.Scale(math.MaxInt64 / 3); p[Memory] != Saturated || p[CPU] != math.MaxInt64/3 {
		t.Errorf("Scale = %v", p[:2])
	}
	for _, tc := range []struct{ a, b, want int64 }{
		{math.MinInt64, 1, math.MinInt64},
		{math.MinInt64, -1, math.MaxInt64},
		{-3, math.MaxInt64, math.MinInt64},
		{1 << 32, 1 << 31, math.MaxInt64}, // 2^63
		{-(1 << 31), 1 << 32, math.MinInt64},
		{1 << 31, 1 << 31, 1 << 62},
		{7, -6, -42},
	} {
		if got := SatMul(tc.a, tc.b); got != tc.want {
			t.Errorf("SatMul(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
