package apitest

import "fmt"

// BaseNodePool is the smallest valid NodePool; the cases patch it.
const BaseNodePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: [on-demand]
`

// BaseNodeClaim is the smallest valid NodeClaim; the cases patch it.
const BaseNodeClaim = `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-x7k2p
  labels:
    karpenter.sh/nodepool: default
spec:
  nodeClassRef:
    group: karpenter.k8s.aws
    kind: EC2NodeClass
    name: default
  requirements:
  - key: karpenter.sh/capacity-type
    operator: In
    values: [on-demand]
`

// nodePool patches BaseNodePool at its root.
func nodePool(p string) string { return patch(BaseNodePool, p) }

// npSpec patches spec.
func npSpec(p string) string { return nodePool(fmt.Sprintf("{spec: %s}", p)) }

// npTemplate patches spec.template.spec.
func npTemplate(p string) string { return npSpec(fmt.Sprintf("{template: {spec: %s}}", p)) }

// npLabels sets spec.template.metadata.labels.
func npLabels(labels string) string {
	return npSpec(fmt.Sprintf("{template: {metadata: {labels: %s}}}", labels))
}

// npRequirements replaces the requirements.
func npRequirements(reqs ...string) string {
	return npTemplate(fmt.Sprintf("{requirements: %s}", list(reqs)))
}

// npDisruption patches spec.disruption.
func npDisruption(p string) string { return npSpec(fmt.Sprintf("{disruption: %s}", p)) }

// npBudgets replaces the budgets.
func npBudgets(budgets ...string) string {
	return npDisruption(fmt.Sprintf("{consolidateAfter: 0s, budgets: %s}", list(budgets)))
}

// nodeClaim patches BaseNodeClaim at its root.
func nodeClaim(p string) string { return patch(BaseNodeClaim, p) }

// ncSpec patches spec.
func ncSpec(p string) string { return nodeClaim(fmt.Sprintf("{spec: %s}", p)) }

// ncRequirements replaces the requirements.
func ncRequirements(reqs ...string) string {
	return ncSpec(fmt.Sprintf("{requirements: %s}", list(reqs)))
}

func list(items []string) string {
	s := "["
	for i, item := range items {
		if i > 0 {
			s += ", "
		}
		s += item
	}
	return s + "]"
}
