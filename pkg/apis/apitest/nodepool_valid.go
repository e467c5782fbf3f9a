package apitest

// Realistic NodePools, written as users write them for Karpenter v1.

// GeneralPurposeNodePool is a typical default NodePool: spot and on-demand, several instance
// categories, resource limits, and budgets that pause consolidation during business hours.
const GeneralPurposeNodePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general-purpose
spec:
  template:
    metadata:
      labels:
        team: platform
        example.com/tier: general
      annotations:
        example.com/owner: platform-team
    spec:
      requirements:
      - key: kubernetes.io/arch
        operator: In
        values: [amd64, arm64]
      - key: kubernetes.io/os
        operator: In
        values: [linux]
      - key: karpenter.sh/capacity-type
        operator: In
        values: [spot, on-demand]
      - key: karpenter.k8s.aws/instance-category
        operator: In
        values: [c, m, r]
        minValues: 2
      - key: karpenter.k8s.aws/instance-generation
        operator: Gt
        values: ["2"]
      - key: topology.kubernetes.io/zone
        operator: In
        values: [us-west-2a, us-west-2b, us-west-2c]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      expireAfter: 720h
      terminationGracePeriod: 48h
  limits:
    cpu: "1000"
    memory: 1000Gi
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets:
    - nodes: 10%
    - nodes: "0"
      schedule: "0 9 * * mon-fri"
      duration: 8h
      reasons: [Underutilized]
`

// GPUNodePool serves GPU workloads only: a taint keeps other pods off, a startup taint waits
// for the device plugin, and a higher weight makes it preferred for the pods that tolerate it.
const GPUNodePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  weight: 50
  template:
    metadata:
      labels:
        example.com/accelerator: nvidia
    spec:
      requirements:
      - key: karpenter.k8s.aws/instance-gpu-manufacturer
        operator: In
        values: [nvidia]
      - key: karpenter.k8s.aws/instance-gpu-count
        operator: Gte
        values: ["1"]
      - key: karpenter.k8s.aws/instance-family
        operator: In
        values: [g5, g6, p4d, p5]
      - key: karpenter.sh/capacity-type
        operator: In
        values: [on-demand]
      taints:
      - key: nvidia.com/gpu
        value: "true"
        effect: NoSchedule
      startupTaints:
      - key: example.com/device-plugin-pending
        effect: NoExecute
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: gpu
      expireAfter: Never
  limits:
    nvidia.com/gpu: "16"
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
    budgets:
    - nodes: "1"
      reasons: [Empty, Drifted]
`

// StaticNodePool keeps a fixed number of nodes whatever the pods need.
const StaticNodePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: static-ingress
spec:
  replicas: 3
  limits:
    nodes: "5"
  template:
    metadata:
      labels:
        example.com/role: ingress
    spec:
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: In
        values: [m6i.large, m7i.large]
      - key: karpenter.sh/capacity-type
        operator: In
        values: [on-demand]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
`

// ScheduledBudgetsNodePool uses the Balanced policy and budgets of every form: counts and
// percentages, cron schedules and macros, limited to some reasons or to all.
const ScheduledBudgetsNodePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: batch
spec:
  template:
    spec:
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: [spot]
      - key: karpenter.k8s.aws/instance-cpu
        operator: Lte
        values: ["64"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: batch
      expireAfter: 168h
  disruption:
    consolidationPolicy: Balanced
    consolidateAfter: 5m
    budgets:
    - nodes: 20%
      reasons: [Empty, Underutilized]
    - nodes: "0"
      schedule: "@daily"
      duration: 10m
    - nodes: "5"
      schedule: "30 22 * * *"
      duration: 1h30m
      reasons: [Drifted]
    - nodes: 100%
      schedule: "0 0 1 * *"
      duration: 2h
`

// ValidNodePools returns NodePools the API server must accept: the realistic manifests above
// and edge cases at the limits of each rule.
func ValidNodePools() []Case {
	return []Case{
		{Name: "minimal", Object: BaseNodePool},
		{Name: "general purpose", Object: GeneralPurposeNodePool},
		{Name: "gpu", Object: GPUNodePool},
		{Name: "static", Object: StaticNodePool},
		{Name: "scheduled budgets", Object: ScheduledBudgetsNodePool},
		{Name: "static pool with zero replicas", Object: npSpec(`{replicas: 0}`)},
		{Name: "dynamic pool limiting nodes", Object: npSpec(`{limits: {nodes: '20', cpu: 500m}}`)},
		{Name: "weights 1 and 100", Object: npSpec(`{weight: 100}`)},
		{Name: "consolidation off", Object: npDisruption(`{consolidateAfter: Never}`)},
		{Name: "durations made of units", Object: npTemplate(`{expireAfter: 1h30m15s, terminationGracePeriod: 90s}`)},
		{Name: "disruption without consolidateAfter is defaulted", Object: npDisruption(`{consolidationPolicy: WhenEmpty}`)},
		{Name: "empty disruption is defaulted", Object: npDisruption(`{consolidateAfter: 30s, consolidationPolicy: WhenEmpty}`)},
		{Name: "budget with nodes defaulted", Object: npBudgets(`{reasons: [Drifted]}`)},
		{Name: "budget of 100 percent and of 0 nodes", Object: npBudgets(`{nodes: 100%}`, `{nodes: '0', schedule: '*/15 * * * *', duration: 5m}`)},
		{Name: "requirement keys allowed in restricted domains", Object: npRequirements(
			`{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}`,
			`{key: node-restriction.kubernetes.io/team, operator: Exists}`,
			`{key: team.node.kubernetes.io/pool, operator: DoesNotExist}`,
			`{key: kops.k8s.io/instancegroup, operator: NotIn, values: [a]}`,
			`{key: beta.kubernetes.io/arch, operator: In, values: [amd64]}`,
			`{key: failure-domain.beta.kubernetes.io/zone, operator: In, values: [us-west-2a]}`,
			`{key: topology.kubernetes.io/region, operator: In, values: [us-west-2]}`,
			`{key: node.kubernetes.io/windows-build, operator: Exists}`,
		)},
		{Name: "requirement keys outside restricted domains", Object: npRequirements(
			`{key: Test, operator: Exists}`,
			`{key: test.com/Test, operator: Exists}`,
			`{key: notkubernetes.io/a, operator: Exists}`,
			`{key: karpenter.k8s.aws/instance-local-nvme, operator: Gt, values: ['100']}`,
			`{key: example.com/a, operator: NotIn}`,
		)},
		{Name: "minValues equal to the number of values", Object: npRequirements(`{key: example.com/a, operator: In, values: [a, b, c], minValues: 3}`)},
		{Name: "minValues on Exists", Object: npRequirements(`{key: karpenter.k8s.aws/instance-family, operator: Exists, minValues: 5}`)},
		{Name: "allowed template labels", Object: npLabels(`{node-restriction.kubernetes.io/team: a, kops.k8s.io/group: b, karpenter.sh/capacity-type: spot, topology.kubernetes.io/zone: us-west-2a, example.com/empty: ''}`)},
		{Name: "taints with the same key and different effects", Object: npTemplate(`{taints: [{key: a, effect: NoSchedule}, {key: a, effect: NoExecute}, {key: test.com/Test, value: f, effect: PreferNoSchedule}]}`)},
		{Name: "nodeClassRef name changed", Old: BaseNodePool, Object: npTemplate(`{nodeClassRef: {name: other}}`)},
		{Name: "static pool rescaled", Old: npSpec(`{replicas: 3}`), Object: npSpec(`{replicas: 5}`)},
		{Name: "dynamic pool reweighted", Old: npSpec(`{weight: 10}`), Object: npSpec(`{weight: 20}`)},
	}
}
