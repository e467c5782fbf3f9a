package apitest

// LaunchedNodeClaim is a NodeClaim as tenon writes it once its node is up, status included.
const LaunchedNodeClaim = `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: general-purpose-8xz4q
  labels:
    karpenter.sh/nodepool: general-purpose
    karpenter.sh/capacity-type: spot
    node.kubernetes.io/instance-type: m6i.xlarge
    topology.kubernetes.io/zone: us-west-2b
  annotations:
    karpenter.sh/nodepool-hash: "4417936051233459384"
    karpenter.sh/nodepool-hash-version: tenon-v1
spec:
  requirements:
  - key: karpenter.sh/nodepool
    operator: In
    values: [general-purpose]
  - key: node.kubernetes.io/instance-type
    operator: In
    values: [m6i.xlarge, m7i.xlarge, c6i.2xlarge]
    minValues: 2
  - key: karpenter.sh/capacity-type
    operator: In
    values: [spot]
  resources:
    requests:
      cpu: 3500m
      memory: 12Gi
      pods: "9"
  taints:
  - key: example.com/dedicated
    value: web
    effect: NoSchedule
  startupTaints:
  - key: node.cilium.io/agent-not-ready
    value: "true"
    effect: NoExecute
  nodeClassRef:
    group: karpenter.k8s.aws
    kind: EC2NodeClass
    name: default
  expireAfter: 720h
  terminationGracePeriod: 1h
status:
  nodeName: ip-10-0-12-34.us-west-2.compute.internal
  providerID: aws:///us-west-2b/i-0123456789abcdef0
  imageID: ami-0123456789abcdef0
  capacity:
    cpu: "4"
    memory: 16Gi
    pods: "58"
    ephemeral-storage: 20Gi
  allocatable:
    cpu: 3920m
    memory: 14Gi
    pods: "58"
    ephemeral-storage: 18Gi
  lastPodEventTime: "2026-03-01T10:00:05Z"
  conditions:
  - type: Launched
    status: "True"
    reason: Launched
    message: ""
    lastTransitionTime: "2026-03-01T09:58:00Z"
  - type: Registered
    status: "True"
    reason: Registered
    message: ""
    lastTransitionTime: "2026-03-01T09:59:10Z"
  - type: Initialized
    status: "True"
    reason: Initialized
    message: ""
    lastTransitionTime: "2026-03-01T09:59:40Z"
  - type: Ready
    status: "True"
    reason: Ready
    message: ""
    lastTransitionTime: "2026-03-01T09:59:40Z"
`

// InvalidNodeClaims returns NodeClaims the API server must refuse, each with a substring of the
// message it must give.
func InvalidNodeClaims() []Case {
	return []Case{
		{Name: "spec changed", Old: BaseNodeClaim, Object: ncSpec(`{expireAfter: 24h}`), Want: "the spec of a NodeClaim cannot be changed after it is created"},
		{Name: "requirements changed", Old: BaseNodeClaim, Object: ncRequirements(`{key: karpenter.sh/capacity-type, operator: In, values: [spot]}`), Want: "the spec of a NodeClaim cannot be changed after it is created"},
		{Name: "no nodeClassRef", Object: ncSpec(`{nodeClassRef: null}`), Want: "spec.nodeClassRef: Required value"},
		{Name: "nodeClassRef with an empty name", Object: ncSpec(`{nodeClassRef: {name: ''}}`), Want: "name must not be empty"},
		{Name: "no requirements", Object: ncSpec(`{requirements: null}`), Want: "spec.requirements: Required value"},
		{Name: "unknown operator", Object: ncRequirements(`{key: example.com/a, operator: Like, values: [x]}`), Want: `Unsupported value: "Like"`},
		{Name: "Gt with a fraction", Object: ncRequirements(`{key: example.com/a, operator: Gt, values: ['1.5']}`), Want: "must have exactly one value, a non-negative integer"},
		{Name: "minValues above the number of values", Object: ncRequirements(`{key: example.com/a, operator: In, values: [x], minValues: 2}`), Want: "minValues must not exceed the number of values"},
		{Name: "key kubernetes.io/hostname", Object: ncRequirements(`{key: kubernetes.io/hostname, operator: Exists}`), Want: "kubernetes.io/hostname is restricted"},
		{Name: "key in karpenter.sh", Object: ncRequirements(`{key: karpenter.sh/unknown, operator: Exists}`), Want: "keys in the label domain karpenter.sh are restricted"},
		{Name: "taint effect unknown", Object: ncSpec(`{taints: [{key: a, effect: Never}]}`), Want: `spec.taints[0].effect: Unsupported value: "Never"`},
		{Name: "startup taint key invalid", Object: ncSpec(`{startupTaints: [{key: 'a b', effect: NoSchedule}]}`), Want: mismatch("spec.startupTaints[0].key")},
		{Name: "expireAfter in days", Object: ncSpec(`{expireAfter: 1d}`), Want: mismatch("spec.expireAfter")},
		{Name: "terminationGracePeriod negative", Object: ncSpec(`{terminationGracePeriod: -5m}`), Want: mismatch("spec.terminationGracePeriod")},
		{Name: "request that is not a quantity", Object: ncSpec(`{resources: {requests: {cpu: two}}}`), Want: mismatch("spec.resources.requests.cpu")},
		{Name: "v1beta1 kubelet block", Object: ncSpec(`{kubelet: {maxPods: 110}}`), Want: `unknown field "spec.kubelet"`},
	}
}

// ValidNodeClaims returns NodeClaims the API server must accept.
func ValidNodeClaims() []Case {
	return []Case{
		{Name: "minimal", Object: BaseNodeClaim},
		{Name: "launched, with status", Object: LaunchedNodeClaim},
		{Name: "requires its NodePool", Object: ncRequirements(`{key: karpenter.sh/nodepool, operator: In, values: [default]}`, `{key: karpenter.k8s.aws/instance-memory, operator: Gte, values: ['4096']}`)},
		{Name: "expireAfter Never", Object: ncSpec(`{expireAfter: Never}`)},
		{Name: "labels changed, spec unchanged", Old: BaseNodeClaim, Object: nodeClaim(`{metadata: {labels: {example.com/extra: x}}}`)},
		{Name: "status added, spec unchanged", Old: BaseNodeClaim, Object: nodeClaim(`{status: {nodeName: node-a, providerID: 'kwok://node-a'}}`)},
	}
}
