package manifest_test

import (
	"fmt"
	"testing"

	"github.com/tenon-sh/tenon/pkg/manifest"
)

func deployment(replicas int) []byte {
	return fmt.Appendf(nil, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        resources: {limits: {cpu: 500m, memory: 1Gi}}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash]}
`, replicas)
}

func BenchmarkPods(b *testing.B) {
	for _, n := range []int{100, 10000, manifest.MaxPods} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			set, err := manifest.Parse("bench.yaml", deployment(n))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if pods := set.Pods(); len(pods) != n {
					b.Fatalf("%d pods", len(pods))
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	data, err := manifest.Load("testdata/valid")
	if err != nil || len(data.Objects) == 0 {
		b.Fatal(err)
	}
	doc := deployment(3)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.Parse("bench.yaml", doc); err != nil {
			b.Fatal(err)
		}
	}
}
