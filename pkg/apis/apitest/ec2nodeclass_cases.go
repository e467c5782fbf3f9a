package apitest

import (
	"fmt"
	"strings"
)

const awsGroup = "karpenter.k8s.aws"

// BaseEC2NodeClass is the smallest valid EC2NodeClass, as Karpenter's getting-started guide
// writes one; the cases patch it.
const BaseEC2NodeClass = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
  - alias: al2023@latest
  subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
  - tags:
      karpenter.sh/discovery: demo
`

// ResolvedEC2NodeClass is an EC2NodeClass as a provider writes it once resolved, status
// included.
const ResolvedEC2NodeClass = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: resolved
  annotations:
    karpenter.k8s.aws/ec2nodeclass-hash: "6420875361728283741"
    karpenter.k8s.aws/ec2nodeclass-hash-version: tenon-v1
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
  - alias: al2023@v20240625
  subnetSelectorTerms:
  - id: subnet-0a1b2c3d4e5f60001
  - id: subnet-0a1b2c3d4e5f60002
  securityGroupSelectorTerms:
  - id: sg-0a1b2c3d4e5f60001
  capacityReservationSelectorTerms:
  - id: cr-0a1b2c3d4e5f60001
status:
  instanceProfile: demo_1234567890
  subnets:
  - {id: subnet-0a1b2c3d4e5f60001, zone: us-west-2a, zoneID: usw2-az1}
  - {id: subnet-0a1b2c3d4e5f60002, zone: us-west-2b, zoneID: usw2-az2}
  securityGroups:
  - {id: sg-0a1b2c3d4e5f60001, name: eks-cluster-sg-demo}
  amis:
  - id: ami-0a1b2c3d4e5f60001
    name: amazon-eks-node-al2023-x86_64-standard-1.31-v20240625
    requirements:
    - {key: kubernetes.io/arch, operator: In, values: [amd64]}
    - {key: karpenter.k8s.aws/instance-gpu-count, operator: DoesNotExist}
  capacityReservations:
  - availabilityZone: us-west-2a
    id: cr-0a1b2c3d4e5f60001
    instanceMatchCriteria: targeted
    instanceType: p5.48xlarge
    ownerID: "123456789012"
    reservationType: capacity-block
    endTime: "2026-03-02T10:00:00Z"
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: "", lastTransitionTime: "2026-03-01T09:58:00Z"}
  - {type: AMIsReady, status: "True", reason: AMIsReady, message: "", lastTransitionTime: "2026-03-01T09:58:00Z"}
`

// ec2 patches BaseEC2NodeClass at its root.
func ec2(p string) string { return patch(BaseEC2NodeClass, p) }

// ec2Spec patches spec.
func ec2Spec(p string) string { return ec2(fmt.Sprintf("{spec: %s}", p)) }

// ec2Kubelet sets spec.kubelet.
func ec2Kubelet(p string) string { return ec2Spec(fmt.Sprintf("{kubelet: %s}", p)) }

// ec2AMIs replaces the AMI selector terms, leaving amiFamily to the caller.
func ec2AMIs(terms ...string) string {
	return ec2Spec(fmt.Sprintf("{amiSelectorTerms: %s}", list(terms)))
}

// ec2EBS sets one block device with the given ebs block.
func ec2EBS(ebs string) string {
	return ec2Spec(fmt.Sprintf("{blockDeviceMappings: [{deviceName: /dev/xvda, ebs: %s}]}", ebs))
}

// InvalidEC2NodeClasses returns EC2NodeClasses the API server must refuse, each with a
// substring of the message it must give.
func InvalidEC2NodeClasses() []Case {
	const (
		mutexAlias = "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"
		emptyTag   = "empty tag keys or values aren't supported"
	)
	many := make([]string, 31)
	for i := range many {
		many[i] = fmt.Sprintf("{id: subnet-%04d}", i)
	}
	manyTags := make([]string, 21)
	for i := range manyTags {
		manyTags[i] = fmt.Sprintf("k%d: v", i)
	}
	return []Case{
		// Type and shape.
		{Name: "wrong apiVersion", Object: ec2(`{apiVersion: karpenter.k8s.aws/v1beta1}`), Want: "must be karpenter.k8s.aws/v1"},
		{Name: "no spec", Object: ec2(`{spec: null}`), Want: "spec: Required value"},
		{Name: "role and instanceProfile together", Object: ec2Spec(`{instanceProfile: demo}`), Want: "must specify exactly one of ['role', 'instanceProfile']"},
		{Name: "neither role nor instanceProfile", Object: ec2Spec(`{role: null}`), Want: "must specify exactly one of ['role', 'instanceProfile']"},
		{Name: "empty role", Object: ec2Spec(`{role: ''}`), Want: "role cannot be empty"},
		{Name: "empty instanceProfile", Object: ec2Spec(`{role: null, instanceProfile: ''}`), Want: "instanceProfile cannot be empty"},
		{Name: "unknown field", Object: ec2Spec(`{launchTemplate: my-template}`), Want: `unknown field "spec.launchTemplate"`},

		// Subnets.
		{Name: "no subnetSelectorTerms", Object: ec2Spec(`{subnetSelectorTerms: null}`), Want: "spec.subnetSelectorTerms: Required value"},
		{Name: "empty subnetSelectorTerms", Object: ec2Spec(`{subnetSelectorTerms: []}`), Want: "subnetSelectorTerms cannot be empty"},
		{Name: "subnet term with nothing", Object: ec2Spec(`{subnetSelectorTerms: [{}]}`), Want: "expected at least one, got none, ['tags', 'id']"},
		{Name: "subnet term with id and tags", Object: ec2Spec(`{subnetSelectorTerms: [{id: subnet-123, tags: {a: b}}]}`), Want: "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term"},
		{Name: "subnet id malformed", Object: ec2Spec(`{subnetSelectorTerms: [{id: sg-123}]}`), Want: mismatch("spec.subnetSelectorTerms[0].id")},
		{Name: "subnet tag with an empty value", Object: ec2Spec(`{subnetSelectorTerms: [{tags: {a: ''}}]}`), Want: emptyTag},
		{Name: "more than 30 subnet terms", Object: ec2Spec(fmt.Sprintf("{subnetSelectorTerms: %s}", list(many))), Want: "must have at most 30 items"},
		{Name: "more than 20 tags in a term", Object: ec2Spec(fmt.Sprintf("{subnetSelectorTerms: [{tags: {%s}}]}", strings.Join(manyTags, ", "))), Want: "must have at most 20 items"},

		// Security groups.
		{Name: "no securityGroupSelectorTerms", Object: ec2Spec(`{securityGroupSelectorTerms: null}`), Want: "spec.securityGroupSelectorTerms: Required value"},
		{Name: "empty securityGroupSelectorTerms", Object: ec2Spec(`{securityGroupSelectorTerms: []}`), Want: "securityGroupSelectorTerms cannot be empty"},
		{Name: "security group term with nothing", Object: ec2Spec(`{securityGroupSelectorTerms: [{}]}`), Want: "expected at least one, got none, ['tags', 'id', 'name']"},
		{Name: "security group id with a name", Object: ec2Spec(`{securityGroupSelectorTerms: [{id: sg-123, name: web}]}`), Want: "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"},
		{Name: "security group name with tags", Object: ec2Spec(`{securityGroupSelectorTerms: [{name: web, tags: {a: b}}]}`), Want: "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"},
		{Name: "security group id malformed", Object: ec2Spec(`{securityGroupSelectorTerms: [{id: subnet-1}]}`), Want: mismatch("spec.securityGroupSelectorTerms[0].id")},
		{Name: "security group tag with an empty key", Object: ec2Spec(`{securityGroupSelectorTerms: [{tags: {'': b}}]}`), Want: emptyTag},

		// Capacity reservations.
		{Name: "capacity reservation term with only an owner", Object: ec2Spec(`{capacityReservationSelectorTerms: [{ownerID: '123456789012'}]}`), Want: "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']"},
		{Name: "capacity reservation id with an owner", Object: ec2Spec(`{capacityReservationSelectorTerms: [{id: cr-123, ownerID: '123456789012'}]}`), Want: "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term"},
		{Name: "capacity reservation id malformed", Object: ec2Spec(`{capacityReservationSelectorTerms: [{id: r-123}]}`), Want: mismatch("spec.capacityReservationSelectorTerms[0].id")},
		{Name: "capacity reservation owner not an account", Object: ec2Spec(`{capacityReservationSelectorTerms: [{tags: {a: b}, ownerID: '1234'}]}`), Want: mismatch("spec.capacityReservationSelectorTerms[0].ownerID")},
		{Name: "capacity reservation match criteria unknown", Object: ec2Spec(`{capacityReservationSelectorTerms: [{instanceMatchCriteria: any}]}`), Want: `Unsupported value: "any"`},

		// AMIs.
		{Name: "no amiSelectorTerms", Object: ec2Spec(`{amiSelectorTerms: null}`), Want: "spec.amiSelectorTerms: Required value"},
		{Name: "empty amiSelectorTerms", Object: ec2Spec(`{amiSelectorTerms: []}`), Want: "should have at least 1 items"},
		{Name: "AMI term with nothing", Object: ec2Spec(`{amiFamily: AL2023, amiSelectorTerms: [{}]}`), Want: "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']"},
		{Name: "alias with a tag", Object: ec2AMIs(`{alias: al2023@latest, tags: {a: b}}`), Want: mutexAlias},
		{Name: "alias with another term", Object: ec2AMIs(`{alias: al2023@latest}`, `{id: ami-123}`), Want: "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms"},
		{Name: "AMI id with a name", Object: ec2Spec(`{amiFamily: AL2023, amiSelectorTerms: [{id: ami-123, name: my-ami}]}`), Want: "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"},
		{Name: "alias without a version", Object: ec2AMIs(`{alias: al2023}`), Want: "'alias' is improperly formatted, must match the format 'family@version'"},
		{Name: "alias of an unknown family", Object: ec2AMIs(`{alias: ubuntu@latest}`), Want: "family is not supported"},
		{Name: "windows alias pinned", Object: ec2AMIs(`{alias: windows2022@v20240101}`), Want: "windows families may only specify version 'latest'"},
		{Name: "alias longer than 30", Object: ec2AMIs(`{alias: bottlerocket@v1.20.0-abcdefghijklmnop}`), Want: "may not be more than 30"},
		{Name: "AMI id malformed", Object: ec2Spec(`{amiFamily: AL2023, amiSelectorTerms: [{id: img-123}]}`), Want: mismatch("spec.amiSelectorTerms[0].id")},
		{Name: "no amiFamily without an alias", Object: ec2AMIs(`{id: ami-123}`), Want: "must specify amiFamily if amiSelectorTerms does not contain an alias"},
		{Name: "amiFamily unknown", Object: ec2Spec(`{amiFamily: Ubuntu, amiSelectorTerms: [{id: ami-123}]}`), Want: `Unsupported value: "Ubuntu"`},
		{Name: "amiFamily AL2 with an AL2023 alias", Object: ec2Spec(`{amiFamily: AL2}`), Want: "if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias"},
		{Name: "amiFamily AL2023 with an AL2 alias", Object: ec2Spec(`{amiFamily: AL2023, amiSelectorTerms: [{alias: al2@latest}]}`), Want: "if set, amiFamily must be 'AL2' or 'Custom' when using an AL2 alias"},
		{Name: "amiFamily AL2023 with a Bottlerocket alias", Object: ec2Spec(`{amiFamily: AL2023, amiSelectorTerms: [{alias: bottlerocket@latest}]}`), Want: "if set, amiFamily must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias"},
		{Name: "amiFamily Bottlerocket with a Windows2022 alias", Object: ec2Spec(`{amiFamily: Bottlerocket, amiSelectorTerms: [{alias: windows2022@latest}]}`), Want: "if set, amiFamily must be 'Windows2022' or 'Custom' when using a Windows2022 alias"},

		// Tags.
		{Name: "tag eks:eks-cluster-name", Object: ec2Spec(`{tags: {'eks:eks-cluster-name': demo}}`), Want: "tag contains a restricted tag matching eks:eks-cluster-name"},
		{Name: "tag kubernetes.io/cluster/", Object: ec2Spec(`{tags: {kubernetes.io/cluster/demo: owned}}`), Want: "tag contains a restricted tag matching kubernetes.io/cluster/"},
		{Name: "tag karpenter.sh/nodepool", Object: ec2Spec(`{tags: {karpenter.sh/nodepool: default}}`), Want: "tag contains a restricted tag matching karpenter.sh/nodepool"},
		{Name: "tag karpenter.sh/nodeclaim", Object: ec2Spec(`{tags: {karpenter.sh/nodeclaim: default-abc}}`), Want: "tag contains a restricted tag matching karpenter.sh/nodeclaim"},
		{Name: "tag karpenter.k8s.aws/ec2nodeclass", Object: ec2Spec(`{tags: {karpenter.k8s.aws/ec2nodeclass: default}}`), Want: "tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass"},
		{Name: "empty tag key", Object: ec2Spec(`{tags: {'': x}}`), Want: "empty tag keys aren't supported"},

		// Kubelet.
		{Name: "maxPods negative", Object: ec2Kubelet(`{maxPods: -1}`), Want: "should be greater than or equal to 0"},
		{Name: "podsPerCore negative", Object: ec2Kubelet(`{podsPerCore: -1}`), Want: "should be greater than or equal to 0"},
		{Name: "systemReserved key unknown", Object: ec2Kubelet(`{systemReserved: {nvidia.com/gpu: '1'}}`), Want: "valid keys for systemReserved are ['cpu','memory','ephemeral-storage','pid']"},
		{Name: "systemReserved negative", Object: ec2Kubelet(`{systemReserved: {cpu: -100m}}`), Want: "systemReserved value cannot be a negative resource quantity"},
		{Name: "kubeReserved key unknown", Object: ec2Kubelet(`{kubeReserved: {gpu: '1'}}`), Want: "valid keys for kubeReserved are ['cpu','memory','ephemeral-storage','pid']"},
		{Name: "kubeReserved negative", Object: ec2Kubelet(`{kubeReserved: {memory: -1Gi}}`), Want: "kubeReserved value cannot be a negative resource quantity"},
		{Name: "evictionHard signal unknown", Object: ec2Kubelet(`{evictionHard: {memory.free: 5%}}`), Want: "valid keys for evictionHard are"},
		{Name: "evictionSoft signal unknown", Object: ec2Kubelet(`{evictionSoft: {disk.available: 5%}, evictionSoftGracePeriod: {disk.available: 1m}}`), Want: "valid keys for evictionSoft are"},
		{Name: "evictionSoft without a grace period", Object: ec2Kubelet(`{evictionSoft: {memory.available: 5%}}`), Want: "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod"},
		{Name: "evictionSoftGracePeriod without a threshold", Object: ec2Kubelet(`{evictionSoft: {memory.available: 5%}, evictionSoftGracePeriod: {memory.available: 1m, nodefs.available: 1m}}`), Want: "evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft"},
		{Name: "imageGC high below low", Object: ec2Kubelet(`{imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}`), Want: "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"},
		{Name: "imageGC high above 100", Object: ec2Kubelet(`{imageGCHighThresholdPercent: 101}`), Want: "should be less than or equal to 100"},
		{Name: "kubelet field unknown", Object: ec2Kubelet(`{maxpods: 110}`), Want: `unknown field "spec.kubelet.maxpods"`},

		// Block devices and instance store.
		{Name: "two root volumes", Object: ec2Spec(`{blockDeviceMappings: [{deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 20Gi}}, {deviceName: /dev/xvdb, rootVolume: true, ebs: {volumeSize: 20Gi}}]}`), Want: "must have only one blockDeviceMappings with rootVolume"},
		{Name: "ebs without size or snapshot", Object: ec2EBS(`{volumeType: gp3}`), Want: "snapshotID or volumeSize must be defined"},
		{Name: "volumeInitializationRate without a snapshot", Object: ec2EBS(`{volumeSize: 20Gi, volumeInitializationRate: 200}`), Want: "snapshotID must be set when volumeInitializationRate is set"},
		{Name: "volumeInitializationRate above 300", Object: ec2EBS(`{snapshotID: snap-1, volumeInitializationRate: 301}`), Want: "should be less than or equal to 300"},
		{Name: "volume size in Mi", Object: ec2EBS(`{volumeSize: 20000Mi}`), Want: mismatch("spec.blockDeviceMappings[0].ebs.volumeSize")},
		{Name: "volume size above 64T", Object: ec2EBS(`{volumeSize: 65T}`), Want: mismatch("spec.blockDeviceMappings[0].ebs.volumeSize")},
		{Name: "volume type unknown", Object: ec2EBS(`{volumeSize: 20Gi, volumeType: gp4}`), Want: `Unsupported value: "gp4"`},
		{Name: "instance store policy unknown", Object: ec2Spec(`{instanceStorePolicy: RAID1}`), Want: `Unsupported value: "RAID1"`},

		// Metadata, network, placement, CPU.
		{Name: "httpTokens unknown", Object: ec2Spec(`{metadataOptions: {httpTokens: sometimes}}`), Want: `Unsupported value: "sometimes"`},
		{Name: "httpEndpoint unknown", Object: ec2Spec(`{metadataOptions: {httpEndpoint: 'on'}}`), Want: `Unsupported value: "on"`},
		{Name: "hop limit 0", Object: ec2Spec(`{metadataOptions: {httpPutResponseHopLimit: 0}}`), Want: "should be greater than or equal to 1"},
		{Name: "hop limit 65", Object: ec2Spec(`{metadataOptions: {httpPutResponseHopLimit: 65}}`), Want: "should be less than or equal to 64"},
		{Name: "network interfaces without a primary", Object: ec2Spec(`{networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: efa-only}]}`), Want: "networkInterfaces must include a primary interface with interfaceType='interface'"},
		{Name: "network interfaces duplicated", Object: ec2Spec(`{networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}]}`), Want: "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs"},
		{Name: "network interface type unknown", Object: ec2Spec(`{networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: ena}]}`), Want: `Unsupported value: "ena"`},
		{Name: "placement group with name and id", Object: ec2Spec(`{placementGroupSelector: {name: pg, id: pg-123}}`), Want: "'name' and 'id' are mutually exclusive"},
		{Name: "placement group with neither", Object: ec2Spec(`{placementGroupSelector: {}}`), Want: "expected at least one, got none, ['name', 'id']"},
		{Name: "connection tracking empty", Object: ec2Spec(`{connectionTracking: {}}`), Want: "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set"},
		{Name: "udpTimeout above 60", Object: ec2Spec(`{connectionTracking: {udpTimeout: 61}}`), Want: "should be less than or equal to 60"},
		{Name: "nested virtualization unknown", Object: ec2Spec(`{cpuOptions: {nestedVirtualization: 'yes'}}`), Want: `Unsupported value: "yes"`},
		{Name: "ipPrefixCount negative", Object: ec2Spec(`{ipPrefixCount: -1}`), Want: "should be greater than or equal to 0"},
	}
}

// ValidEC2NodeClasses returns EC2NodeClasses the API server must accept.
func ValidEC2NodeClasses() []Case {
	return []Case{
		{Name: "minimal", Object: BaseEC2NodeClass},
		{Name: "resolved, with status", Object: ResolvedEC2NodeClass},
		{Name: "pinned al2023 alias with its family", Object: ec2Spec(`{amiFamily: AL2023, amiSelectorTerms: [{alias: al2023@v20240625}]}`)},
		{Name: "bottlerocket alias, Custom family", Object: ec2Spec(`{amiFamily: Custom, amiSelectorTerms: [{alias: bottlerocket@v1.20.0}]}`)},
		{Name: "windows2022 latest", Object: ec2AMIs(`{alias: windows2022@latest}`)},
		{Name: "AMIs by name, owner and tags, and by SSM parameter", Object: ec2Spec(`{amiFamily: AL2023, amiSelectorTerms: [{name: my-ami-*, owner: self, tags: {team: a}}, {ssmParameter: /my/ami}, {id: ami-0123abcd}]}`)},
		{Name: "instance profile instead of role", Object: ec2Spec(`{role: null, instanceProfile: KarpenterNodeInstanceProfile}`)},
		{Name: "security groups by name and id", Object: ec2Spec(`{securityGroupSelectorTerms: [{name: eks-cluster-sg}, {id: sg-0123}]}`)},
		{Name: "capacity reservations", Object: ec2Spec(`{capacityReservationSelectorTerms: [{id: cr-0123}, {tags: {team: a}, ownerID: '123456789012'}, {instanceMatchCriteria: open}]}`)},
		{Name: "tags", Object: ec2Spec(`{tags: {team: a, karpenter.sh/discovery: demo}}`)},
		{Name: "full kubelet", Object: ec2Kubelet(`{clusterDNS: [10.100.0.10], maxPods: 110, podsPerCore: 10, systemReserved: {cpu: 100m, memory: 100Mi}, kubeReserved: {cpu: 200m, ephemeral-storage: 1Gi, pid: '100'}, ` +
			`evictionHard: {memory.available: 5%}, evictionSoft: {memory.available: 10%}, evictionSoftGracePeriod: {memory.available: 1m}, evictionMaxPodGracePeriod: 60, ` +
			`imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80, cpuCFSQuota: true}`)},
		{Name: "block devices, RAID0, monitoring, public IP", Object: ec2Spec(`{blockDeviceMappings: [{deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 100Gi, volumeType: gp3, iops: 10000, throughput: 125, encrypted: true, deleteOnTermination: true}}, ` +
			`{deviceName: /dev/xvdb, ebs: {snapshotID: snap-0123, volumeInitializationRate: 200}}], instanceStorePolicy: RAID0, detailedMonitoring: true, associatePublicIPAddress: false}`)},
		{Name: "metadata options", Object: ec2Spec(`{metadataOptions: {httpEndpoint: enabled, httpProtocolIPv6: enabled, httpPutResponseHopLimit: 2, httpTokens: optional}}`)},
		{Name: "EFA network interfaces", Object: ec2Spec(`{networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 1, deviceIndex: 0, interfaceType: efa-only}]}`)},
		{Name: "placement group, connection tracking, cpu options, context", Object: ec2Spec(`{placementGroupSelector: {name: my-pg}, connectionTracking: {tcpEstablishedTimeout: 3600}, cpuOptions: {nestedVirtualization: enabled}, context: c-123, ipPrefixCount: 1}`)},
		{Name: "user data", Object: ec2Spec(`{userData: "#!/bin/bash\necho hello\n"}`)},
		{Name: "status written, spec unchanged", Old: BaseEC2NodeClass, Object: ec2(`{status: {instanceProfile: demo_1, subnets: [{id: subnet-1, zone: us-west-2a}]}}`)},
	}
}
