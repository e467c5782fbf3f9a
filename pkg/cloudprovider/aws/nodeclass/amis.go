package nodeclass

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
)

// Variant is an EKS-optimized AMI's flavour: which instance types it runs on.
type Variant string

// The variants. Standard AMIs run on instance types without GPUs or accelerators; NVIDIA
// ones on GPU types; Neuron ones on accelerator (Inferentia, Trainium) types.
const (
	VariantStandard Variant = "standard"
	VariantNvidia   Variant = "nvidia"
	VariantNeuron   Variant = "neuron"
)

// requirements are what an instance type must satisfy to run an AMI of the variant.
func (v Variant) requirements() []corev1.NodeSelectorRequirement {
	switch v {
	case VariantNvidia:
		return []corev1.NodeSelectorRequirement{{Key: apisv1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpExists}}
	case VariantNeuron:
		return []corev1.NodeSelectorRequirement{{Key: apisv1.LabelInstanceAcceleratorCount, Operator: corev1.NodeSelectorOpExists}}
	}
	return []corev1.NodeSelectorRequirement{
		{Key: apisv1.LabelInstanceAcceleratorCount, Operator: corev1.NodeSelectorOpDoesNotExist},
		{Key: apisv1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpDoesNotExist},
	}
}

// windowsBuilds are the Windows Server builds (node.kubernetes.io/windows-build) by family.
var windowsBuilds = map[string]string{
	awsv1.AMIFamilyWindows2019: "10.0.17763",
	awsv1.AMIFamilyWindows2022: "10.0.20348",
	awsv1.AMIFamilyWindows2025: "10.0.26100",
}

// aliasParameter is one SSM parameter an alias reads, and the requirements each image it
// names carries besides its architecture (one set per variant it serves).
type aliasParameter struct {
	name     string
	variants [][]corev1.NodeSelectorRequirement
}

func variants(vs ...Variant) [][]corev1.NodeSelectorRequirement {
	out := make([][]corev1.NodeSelectorRequirement, len(vs))
	for i, v := range vs {
		out[i] = v.requirements()
	}
	return out
}

// aliasParameters are the public SSM parameters an alias resolves through, for a Kubernetes
// version ("1.37"), with the variants each parameter's image serves. An error means the alias
// cannot be used with that version.
func aliasParameters(alias awsv1.Alias, k8s string) ([]aliasParameter, error) {
	minor := -1
	if _, m, ok := strings.Cut(k8s, "."); ok {
		if n, err := strconv.Atoi(m); err == nil {
			minor = n
		}
	}
	latest := alias.Version == awsv1.AliasVersionLatest
	switch alias.Family {
	case awsv1.AMIFamilyAL2023:
		var out []aliasParameter
		for _, a := range []struct {
			arch string
			vs   []Variant
		}{{"x86_64", []Variant{VariantStandard, VariantNvidia, VariantNeuron}}, {"arm64", []Variant{VariantStandard, VariantNvidia}}} {
			for _, v := range a.vs {
				name := "recommended"
				if !latest {
					name = fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", a.arch, v, k8s, alias.Version)
				}
				out = append(out, aliasParameter{
					name:     fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", k8s, a.arch, v, name),
					variants: variants(v),
				})
			}
		}
		return out, nil
	case awsv1.AMIFamilyAL2:
		if minor >= 33 {
			return nil, fmt.Errorf("AL2 AMIs are not published for Kubernetes %s (the last is 1.32); use al2023 or bottlerocket", k8s)
		}
		var out []aliasParameter
		for _, p := range []struct {
			dir, prefix string
			vs          []Variant
		}{
			{"amazon-linux-2", "amazon-eks-node", []Variant{VariantStandard}},
			{"amazon-linux-2-arm64", "amazon-eks-arm64-node", []Variant{VariantStandard}},
			{"amazon-linux-2-gpu", "amazon-eks-gpu-node", []Variant{VariantNeuron, VariantNvidia}},
		} {
			name := "recommended"
			if !latest {
				name = fmt.Sprintf("%s-%s-%s", p.prefix, k8s, alias.Version)
			}
			out = append(out, aliasParameter{name: fmt.Sprintf("/aws/service/eks/optimized-ami/%s/%s/%s/image_id", k8s, p.dir, name), variants: variants(p.vs...)})
		}
		return out, nil
	case awsv1.AMIFamilyBottlerocket:
		version := strings.TrimPrefix(alias.Version, "v") // releases are v1.50.0 on GitHub, 1.50.0 in SSM
		return []aliasParameter{
			{fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/x86_64/%s/image_id", k8s, version), variants(VariantStandard, VariantNeuron)},
			{fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/arm64/%s/image_id", k8s, version), variants(VariantStandard)},
			{fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s-nvidia/x86_64/%s/image_id", k8s, version), variants(VariantNvidia)},
			{fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s-nvidia/arm64/%s/image_id", k8s, version), variants(VariantNvidia)},
		}, nil
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		if !latest {
			return nil, fmt.Errorf("windows aliases take only the version latest, not %q", alias.Version)
		}
		if alias.Family == awsv1.AMIFamilyWindows2025 && minor >= 0 && minor < 35 {
			return nil, fmt.Errorf("Windows Server 2025 AMIs are published from Kubernetes 1.35, not for %s", k8s)
		}
		year := strings.TrimPrefix(alias.Family, "Windows")
		return []aliasParameter{{
			name: fmt.Sprintf("/aws/service/ami-windows-latest/Windows_Server-%s-English-Core-EKS_Optimized-%s/image_id", year, k8s),
			variants: [][]corev1.NodeSelectorRequirement{{
				{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{string(corev1.Windows)}},
				{Key: corev1.LabelWindowsBuild, Operator: corev1.NodeSelectorOpIn, Values: []string{windowsBuilds[alias.Family]}},
			}},
		}}, nil
	}
	return nil, fmt.Errorf("alias family %q is not known", alias.Family)
}

// imageQuery is one DescribeImages call and the extra requirements of the images it finds,
// by image ID (from the alias parameters).
type imageQuery struct {
	in    *ec2.DescribeImagesInput
	known map[string][][]corev1.NodeSelectorRequirement
}

// candidate is one image with one set of requirements.
type candidate struct {
	ami     awsv1.AMI
	created time.Time
	key     string // the requirements, canonical
}

// amis resolves amiSelectorTerms.
func (r *resolution) amis(ctx context.Context) {
	const cond = awsv1.ConditionTypeAMIsReady
	queries, ok := r.imageQueries(ctx)
	if !ok {
		return
	}
	best := map[string]candidate{}
	for _, q := range queries {
		for p := ec2.NewDescribeImagesPaginator(r.c.opts.EC2, q.in); p.HasMorePages(); {
			out, err := p.NextPage(ctx)
			if err != nil {
				r.failed(cond, "DescribeImages", err)
				return
			}
			for _, img := range out.Images {
				for _, c := range r.candidates(img, q.known) {
					if old, ok := best[c.key]; !ok || better(c, old) {
						best[c.key] = c
					}
				}
			}
		}
	}
	if len(best) == 0 {
		r.nc.Status.AMIs = nil
		r.setFalse(cond, ReasonAMINotFound, "no AMIs matched amiSelectorTerms %s", terms(r.nc.Spec.AMISelectorTerms))
		return
	}
	list := make([]candidate, 0, len(best))
	for _, c := range best {
		list = append(list, c)
	}
	slices.SortFunc(list, func(a, b candidate) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return strings.Compare(a.key, b.key)
	})
	r.nc.Status.AMIs = make([]awsv1.AMI, len(list))
	for i, c := range list {
		r.nc.Status.AMIs[i] = c.ami
	}
	r.setTrue(cond)
}

// better: not deprecated beats deprecated, then newer, then the greater name.
func better(a, b candidate) bool {
	if a.ami.Deprecated != b.ami.Deprecated {
		return !a.ami.Deprecated
	}
	if !a.created.Equal(b.created) {
		return a.created.After(b.created)
	}
	return a.ami.Name > b.ami.Name
}

// imageQueries builds the DescribeImages calls of the terms. false means the condition is
// set (or a transient error recorded) and there is nothing to describe.
func (r *resolution) imageQueries(ctx context.Context) ([]imageQuery, bool) {
	const cond = awsv1.ConditionTypeAMIsReady
	if alias, ok := r.nc.Alias(); ok {
		k8s, err := r.c.kubernetesVersion()
		if err != nil {
			r.transient = append(r.transient, err)
			return nil, false
		}
		params, err := aliasParameters(alias, k8s)
		if err != nil {
			r.nc.Status.AMIs = nil
			r.setFalse(cond, ReasonUnsupportedAlias, "alias %s: %v", alias, err)
			return nil, false
		}
		known := map[string][][]corev1.NodeSelectorRequirement{}
		var ids, missing []string
		for _, p := range params {
			id, found, ok := r.parameter(ctx, p.name)
			if !ok {
				return nil, false
			}
			if !found {
				missing = append(missing, p.name)
				continue
			}
			if _, seen := known[id]; !seen {
				ids = append(ids, id)
			}
			known[id] = append(known[id], p.variants...)
		}
		if len(ids) == 0 {
			r.nc.Status.AMIs = nil
			r.setFalse(cond, ReasonAMINotFound, "no AMIs for alias %s on Kubernetes %s: SSM parameters not found: %s", alias, k8s, strings.Join(missing, ", "))
			return nil, false
		}
		return []imageQuery{{in: describeImagesInput(nil, filter("image-id", ids...)), known: known}}, true
	}
	var queries []imageQuery
	var ids []string
	for _, term := range r.nc.Spec.AMISelectorTerms {
		switch {
		case term.ID != "":
			ids = append(ids, term.ID)
		case term.SSMParameter != "":
			id, found, ok := r.parameter(ctx, term.SSMParameter)
			if !ok {
				return nil, false
			}
			if found && strings.HasPrefix(id, "ami-") {
				ids = append(ids, id)
			}
		default:
			var owners []string
			if term.Owner != "" {
				owners = []string{term.Owner}
			} else if term.Name != "" {
				// A name alone would match anyone's public AMIs; only the account's own and
				// Amazon's are meant.
				owners = []string{"self", "amazon"}
			}
			filters := tagFilters(term.Tags)
			if term.Name != "" {
				filters = append(filters, filter("name", term.Name))
			}
			queries = append(queries, imageQuery{in: describeImagesInput(owners, filters...)})
		}
	}
	if len(ids) > 0 {
		queries = append(queries, imageQuery{in: describeImagesInput(nil, filter("image-id", ids...))})
	}
	return queries, true
}

func describeImagesInput(owners []string, filters ...ec2types.Filter) *ec2.DescribeImagesInput {
	return &ec2.DescribeImagesInput{
		Owners:            owners,
		Filters:           append(filters, filter("state", string(ec2types.ImageStateAvailable))),
		IncludeDeprecated: aws.Bool(true),
		MaxResults:        aws.Int32(1000),
	}
}

// parameter reads an SSM parameter: found is false when it does not exist; ok is false when
// the read failed (the condition is set, or a transient error recorded).
func (r *resolution) parameter(ctx context.Context, name string) (value string, found, ok bool) {
	out, err := r.c.opts.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
	if err != nil {
		if errorCode(err) == "ParameterNotFound" {
			return "", false, true
		}
		r.failed(awsv1.ConditionTypeAMIsReady, "GetParameter "+name, err)
		return "", false, false
	}
	if out.Parameter == nil {
		return "", false, true
	}
	return aws.ToString(out.Parameter.Value), true, true
}

// kubeArch maps EC2's architectures to Kubernetes'; others are not launched.
var kubeArch = map[ec2types.ArchitectureValues]string{
	ec2types.ArchitectureValuesX8664: "amd64",
	ec2types.ArchitectureValuesArm64: "arm64",
}

// candidates are an image's entries: one per set of requirements it is known for (by its
// alias parameter), each with its architecture; an image found otherwise has only its
// architecture.
func (r *resolution) candidates(img ec2types.Image, known map[string][][]corev1.NodeSelectorRequirement) []candidate {
	arch, ok := kubeArch[img.Architecture]
	if !ok {
		return nil
	}
	created, _ := time.Parse(time.RFC3339, aws.ToString(img.CreationDate))
	deprecated := false
	if dt := aws.ToString(img.DeprecationTime); dt != "" {
		if t, err := time.Parse(time.RFC3339, dt); err == nil && !r.now.Before(t) {
			deprecated = true
		}
	}
	sets := known[aws.ToString(img.ImageId)]
	if len(sets) == 0 {
		sets = [][]corev1.NodeSelectorRequirement{nil}
	}
	out := make([]candidate, 0, len(sets))
	for _, extra := range sets {
		reqs := append([]corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}, extra...)
		slices.SortFunc(reqs, func(a, b corev1.NodeSelectorRequirement) int {
			if len(a.Key) != len(b.Key) {
				return len(a.Key) - len(b.Key)
			}
			return strings.Compare(a.Key, b.Key)
		})
		out = append(out, candidate{
			ami:     awsv1.AMI{ID: aws.ToString(img.ImageId), Name: aws.ToString(img.Name), Deprecated: deprecated, Requirements: reqs},
			created: created,
			key:     requirementsKey(reqs),
		})
	}
	return out
}

func requirementsKey(reqs []corev1.NodeSelectorRequirement) string {
	var b strings.Builder
	for _, r := range reqs {
		b.WriteString(r.Key)
		b.WriteByte(' ')
		b.WriteString(string(r.Operator))
		for _, v := range r.Values {
			b.WriteByte(' ')
			b.WriteString(v)
		}
		b.WriteByte(';')
	}
	return b.String()
}
