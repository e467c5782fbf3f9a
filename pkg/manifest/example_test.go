package manifest_test

import (
	"fmt"

	"github.com/tenon-sh/tenon/pkg/manifest"
)

func ExampleParse() {
	set, err := manifest.Parse("db.yaml", []byte(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: db, image: postgres, resources: {limits: {cpu: "2", memory: 4Gi}}}
`))
	if err != nil {
		panic(err)
	}
	for _, pod := range set.Pods() {
		fmt.Println(pod.Namespace, pod.Name, pod.Spec.Containers[0].Resources.Requests.Cpu())
	}

	_, err = manifest.Parse("web.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: -1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`))
	fmt.Println(err)
	// Output:
	// default db-0 2
	// default db-1 2
	// web.yaml:5: document 1 (Deployment shop/web): spec.replicas: Invalid value: -1: must be greater than or equal to 0
}
