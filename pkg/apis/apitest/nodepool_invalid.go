package apitest

import (
	"fmt"
	"strings"
)

// InvalidNodePools returns NodePools the API server must refuse, each with a substring of the
// message it must give.
func InvalidNodePools() []Case {
	longPrefix := strings.Repeat("a", 250) + ".com" // 254 characters
	longName := strings.Repeat("n", 64)
	longValue := strings.Repeat("v", 64)
	manyReqs := make([]string, 101)
	for i := range manyReqs {
		manyReqs[i] = fmt.Sprintf("{key: example.com/k%d, operator: Exists}", i)
	}
	manyLabels := make([]string, 101)
	for i := range manyLabels {
		manyLabels[i] = fmt.Sprintf("example.com/l%d: x", i)
	}
	manyBudgets := make([]string, 51)
	for i := range manyBudgets {
		manyBudgets[i] = "{nodes: '1'}"
	}
	const (
		inValues   = "a requirement with operator In must list at least one value"
		oneInteger = "must have exactly one value, a non-negative integer"
		k8sIODom   = "keys in the label domain kubernetes.io are restricted"
		nodepoolK  = "karpenter.sh/nodepool is restricted"
		hostnameK  = "kubernetes.io/hostname is restricted"
		together   = "a budget's schedule and duration must be set together"
	)
	return []Case{
		// Type and shape.
		{Name: "wrong apiVersion", Object: nodePool(`{apiVersion: karpenter.sh/v1beta1}`), Want: "must be karpenter.sh/v1"},
		{Name: "no spec", Object: nodePool(`{spec: null}`), Want: "spec: Required value"},
		{Name: "no template", Object: npSpec(`{template: null}`), Want: "spec.template: Required value"},
		{Name: "no requirements", Object: npTemplate(`{requirements: null}`), Want: "spec.template.spec.requirements: Required value"},
		{Name: "kubelet moved to the NodeClass in v1", Object: npTemplate(`{kubelet: {maxPods: 110}}`), Want: `unknown field "spec.template.spec.kubelet"`},
		{Name: "expireAfter moved to the template in v1", Object: npDisruption(`{consolidateAfter: 0s, expireAfter: 720h}`), Want: `unknown field "spec.disruption.expireAfter"`},

		// Requirements.
		{Name: "unknown operator", Object: npRequirements(`{key: example.com/a, operator: Equals, values: [x]}`), Want: `Unsupported value: "Equals"`},
		{Name: "In without values", Object: npRequirements(`{key: example.com/a, operator: In}`), Want: inValues},
		{Name: "In with an empty list", Object: npRequirements(`{key: example.com/a, operator: In, values: []}`), Want: inValues},
		{Name: "Gt with two values", Object: npRequirements(`{key: example.com/a, operator: Gt, values: ['1', '2']}`), Want: oneInteger},
		{Name: "Lt with a word", Object: npRequirements(`{key: example.com/a, operator: Lt, values: [ten]}`), Want: oneInteger},
		{Name: "Gte with a negative number", Object: npRequirements(`{key: example.com/a, operator: Gte, values: ['-1']}`), Want: oneInteger},
		{Name: "Lte without values", Object: npRequirements(`{key: example.com/a, operator: Lte}`), Want: oneInteger},
		{Name: "minValues above the number of values", Object: npRequirements(`{key: example.com/a, operator: In, values: [a, b], minValues: 3}`), Want: "minValues must not exceed the number of values"},
		{Name: "minValues 0", Object: npRequirements(`{key: example.com/a, operator: Exists, minValues: 0}`), Want: "should be greater than or equal to 1"},
		{Name: "minValues 51", Object: npRequirements(`{key: example.com/a, operator: Exists, minValues: 51}`), Want: "should be less than or equal to 50"},
		{Name: "more than 100 requirements", Object: npRequirements(manyReqs...), Want: "must have at most 100 items"},
		{Name: "key with a brace", Object: npRequirements(`{key: 'test.com.com}', operator: Exists}`), Want: mismatch("spec.template.spec.requirements[0].key")},
		{Name: "key with an upper-case prefix", Object: npRequirements(`{key: Test.com/test, operator: Exists}`), Want: mismatch("spec.template.spec.requirements[0].key")},
		{Name: "key with two slashes", Object: npRequirements(`{key: test/test/test, operator: Exists}`), Want: mismatch("spec.template.spec.requirements[0].key")},
		{Name: "key name longer than 63", Object: npRequirements(fmt.Sprintf(`{key: example.com/%s, operator: Exists}`, longName)), Want: mismatch("spec.template.spec.requirements[0].key")},
		{Name: "key prefix longer than 253", Object: npRequirements(fmt.Sprintf(`{key: %s/a, operator: Exists}`, longPrefix)), Want: "the prefix of a label key must be at most 253 characters"},
		{Name: "value longer than 63", Object: npRequirements(fmt.Sprintf(`{key: example.com/a, operator: In, values: [%s]}`, longValue)), Want: "may not be more than 63"},
		{Name: "value with a space", Object: npRequirements(`{key: example.com/a, operator: In, values: ['a b']}`), Want: mismatch("spec.template.spec.requirements[0].values[0]")},
		{Name: "key in kubernetes.io", Object: npRequirements(`{key: kubernetes.io/custom, operator: Exists}`), Want: k8sIODom},
		{Name: "key in a subdomain of kubernetes.io", Object: npRequirements(`{key: team.kubernetes.io/custom, operator: Exists}`), Want: k8sIODom},
		{Name: "key in k8s.io", Object: npRequirements(`{key: k8s.io/custom, operator: Exists}`), Want: "keys in the label domain k8s.io are restricted"},
		{Name: "key in a subdomain of karpenter.sh", Object: npRequirements(`{key: test.karpenter.sh/custom, operator: Exists}`), Want: "keys in the label domain karpenter.sh are restricted"},
		{Name: "key kubernetes.io/hostname", Object: npRequirements(`{key: kubernetes.io/hostname, operator: In, values: [node-a]}`), Want: hostnameK},
		{Name: "key karpenter.sh/nodepool", Object: npRequirements(`{key: karpenter.sh/nodepool, operator: In, values: [other]}`), Want: nodepoolK},

		// Template labels.
		{Name: "label in kubernetes.io", Object: npLabels(`{kubernetes.io/custom: x}`), Want: k8sIODom},
		{Name: "label in a subdomain of k8s.io", Object: npLabels(`{node.k8s.io/custom: x}`), Want: "keys in the label domain k8s.io are restricted"},
		{Name: "label in karpenter.sh", Object: npLabels(`{karpenter.sh/custom: x}`), Want: "keys in the label domain karpenter.sh are restricted"},
		{Name: "label karpenter.sh/nodepool", Object: npLabels(`{karpenter.sh/nodepool: other}`), Want: nodepoolK},
		{Name: "label kubernetes.io/hostname", Object: npLabels(`{kubernetes.io/hostname: node-a}`), Want: hostnameK},
		{Name: "label key with a space", Object: npLabels(`{'bad key': x}`), Want: "label keys must be qualified names"},
		{Name: "label value with a slash", Object: npLabels(`{example.com/team: a/b}`), Want: mismatch("spec.template.metadata.labels.example.com/team")},
		{Name: "label value longer than 63", Object: npLabels(fmt.Sprintf(`{example.com/team: %s}`, longValue)), Want: "spec.template.metadata.labels.example.com/team: Too long: may not be more than 63 bytes"},
		{Name: "more than 100 labels", Object: npLabels("{" + strings.Join(manyLabels, ", ") + "}"), Want: "must have at most 100 items"},

		// Taints.
		{Name: "taint effect unknown", Object: npTemplate(`{taints: [{key: example.com/a, effect: Sometimes}]}`), Want: `taints[0].effect: Unsupported value: "Sometimes"`},
		{Name: "taint without key", Object: npTemplate(`{taints: [{effect: NoSchedule}]}`), Want: "spec.template.spec.taints[0].key: Required value"},
		{Name: "taint with an empty key", Object: npTemplate(`{taints: [{key: '', effect: NoSchedule}]}`), Want: "spec.template.spec.taints[0].key in body should be at least 1 chars long"},
		{Name: "taint key starting with a slash", Object: npTemplate(`{taints: [{key: /test, effect: NoSchedule}]}`), Want: mismatch("spec.template.spec.taints[0].key")},
		{Name: "taint value with question marks", Object: npTemplate(`{taints: [{key: example.com/a, value: '???', effect: NoSchedule}]}`), Want: mismatch("spec.template.spec.taints[0].value")},
		{Name: "startup taint effect unknown", Object: npTemplate(`{startupTaints: [{key: example.com/a, effect: NoRun}]}`), Want: `startupTaints[0].effect: Unsupported value: "NoRun"`},

		// nodeClassRef.
		{Name: "no nodeClassRef", Object: npTemplate(`{nodeClassRef: null}`), Want: "spec.template.spec.nodeClassRef: Required value"},
		{Name: "nodeClassRef without name", Object: npTemplate(`{nodeClassRef: {name: null}}`), Want: "spec.template.spec.nodeClassRef.name: Required value"},
		{Name: "nodeClassRef with an empty name", Object: npTemplate(`{nodeClassRef: {name: ''}}`), Want: "name must not be empty"},
		{Name: "nodeClassRef with an empty kind", Object: npTemplate(`{nodeClassRef: {kind: ''}}`), Want: "kind must not be empty"},
		{Name: "nodeClassRef with an empty group", Object: npTemplate(`{nodeClassRef: {group: ''}}`), Want: "group must not be empty"},
		{Name: "nodeClassRef group with a version", Object: npTemplate(`{nodeClassRef: {group: karpenter.k8s.aws/v1}}`), Want: mismatch("spec.template.spec.nodeClassRef.group")},
		{Name: "nodeClassRef group changed", Old: BaseNodePool, Object: npTemplate(`{nodeClassRef: {group: karpenter.example.com}}`), Want: "nodeClassRef.group cannot be changed"},
		{Name: "nodeClassRef kind changed", Old: BaseNodePool, Object: npTemplate(`{nodeClassRef: {kind: OtherNodeClass}}`), Want: "nodeClassRef.kind cannot be changed"},

		// Durations.
		{Name: "expireAfter in days", Object: npTemplate(`{expireAfter: 30d}`), Want: mismatch("spec.template.spec.expireAfter")},
		{Name: "expireAfter negative", Object: npTemplate(`{expireAfter: -1h}`), Want: mismatch("spec.template.spec.expireAfter")},
		{Name: "terminationGracePeriod Never", Object: npTemplate(`{terminationGracePeriod: Never}`), Want: mismatch("spec.template.spec.terminationGracePeriod")},
		{Name: "consolidateAfter negative", Object: npDisruption(`{consolidateAfter: -1s}`), Want: mismatch("spec.disruption.consolidateAfter")},
		{Name: "v1beta1 policy WhenUnderutilized", Object: npDisruption(`{consolidateAfter: 0s, consolidationPolicy: WhenUnderutilized}`), Want: `Unsupported value: "WhenUnderutilized"`},

		// Budgets.
		{Name: "budget nodes negative", Object: npBudgets(`{nodes: '-10'}`), Want: mismatch("spec.disruption.budgets[0].nodes")},
		{Name: "budget nodes negative percent", Object: npBudgets(`{nodes: '-10%'}`), Want: mismatch("spec.disruption.budgets[0].nodes")},
		{Name: "budget nodes above 100 percent", Object: npBudgets(`{nodes: '101%'}`), Want: mismatch("spec.disruption.budgets[0].nodes")},
		{Name: "budget schedule without duration", Object: npBudgets(`{nodes: '10', schedule: '* * * * *'}`), Want: together},
		{Name: "budget duration without schedule", Object: npBudgets(`{nodes: '10', duration: 20m}`), Want: together},
		{Name: "one of several budgets without duration", Object: npBudgets(`{nodes: '10'}`, `{nodes: '10', schedule: '@daily', duration: 1h}`, `{nodes: '5', schedule: '@hourly'}`), Want: together},
		{Name: "budget schedule of one field", Object: npBudgets(`{nodes: '10', schedule: '*', duration: 20m}`), Want: mismatch("spec.disruption.budgets[0].schedule")},
		{Name: "budget schedule of four fields", Object: npBudgets(`{nodes: '10', schedule: '* * * *', duration: 20m}`), Want: mismatch("spec.disruption.budgets[0].schedule")},
		{Name: "budget schedule of six fields", Object: npBudgets(`{nodes: '10', schedule: '0 * * * * *', duration: 20m}`), Want: mismatch("spec.disruption.budgets[0].schedule")},
		{Name: "budget duration in seconds", Object: npBudgets(`{nodes: '10', schedule: '@daily', duration: 30s}`), Want: mismatch("spec.disruption.budgets[0].duration")},
		{Name: "budget duration negative", Object: npBudgets(`{nodes: '10', schedule: '@daily', duration: -20m}`), Want: mismatch("spec.disruption.budgets[0].duration")},
		{Name: "budget reason Expired", Object: npBudgets(`{nodes: '10', reasons: [Expired]}`), Want: `Unsupported value: "Expired"`},
		{Name: "budget reason repeated", Object: npBudgets(`{nodes: '10', reasons: [Empty, Empty]}`), Want: "Duplicate value"},
		{Name: "more than 50 budgets", Object: npBudgets(manyBudgets...), Want: "must have at most 50 items"},

		// Weight, limits, replicas.
		{Name: "weight 0", Object: npSpec(`{weight: 0}`), Want: "should be greater than or equal to 1"},
		{Name: "weight 101", Object: npSpec(`{weight: 101}`), Want: "should be less than or equal to 100"},
		{Name: "limit that is not a quantity", Object: npSpec(`{limits: {cpu: lots}}`), Want: mismatch("spec.limits.cpu")},
		{Name: "replicas negative", Object: npSpec(`{replicas: -1}`), Want: "should be greater than or equal to 0"},
		{Name: "replicas above the scale maximum", Object: npSpec(`{replicas: 3000000000}`), Want: "should be less than or equal to 2147483647"},
		{Name: "static pool with a weight", Object: npSpec(`{replicas: 3, weight: 10}`), Want: "a static NodePool (replicas set) cannot have a weight"},
		{Name: "static pool with a cpu limit", Object: npSpec(`{replicas: 3, limits: {nodes: '10', cpu: '100'}}`), Want: "a static NodePool (replicas set) may only limit nodes"},
		{Name: "dynamic pool made static", Old: BaseNodePool, Object: npSpec(`{replicas: 3}`), Want: "a NodePool cannot switch between static (replicas set) and dynamic (replicas unset)"},
		{Name: "static pool made dynamic", Old: npSpec(`{replicas: 3}`), Object: BaseNodePool, Want: "a NodePool cannot switch between static (replicas set) and dynamic (replicas unset)"},
	}
}

// mismatch is the start of the message for a value at path that does not match its pattern.
func mismatch(path string) string { return path + " in body should match" }
