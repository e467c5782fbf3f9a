package v1

import (
	"strings"
)

// Defaults of the spec, as the CRD schema applies them. Accessors return them for a spec
// built in Go that the API server has not defaulted.
const (
	DefaultHTTPEndpoint            = "enabled"
	DefaultHTTPProtocolIPv6        = "disabled"
	DefaultHTTPPutResponseHopLimit = 1
	DefaultHTTPTokens              = "required"
)

// AliasVersionLatest is the alias version that follows each new release.
const AliasVersionLatest = "latest"

// Alias is an amiSelectorTerms alias, split: Family is the AMIFamily spelling (AL2023), Version
// the release or "latest".
type Alias struct {
	Family  string
	Version string
}

// String returns the alias as written in a term: lower-case family@version.
func (a Alias) String() string { return strings.ToLower(a.Family) + "@" + a.Version }

// aliasFamilies are the families an alias may name, in their AMIFamily spelling.
var aliasFamilies = []string{AMIFamilyAL2, AMIFamilyAL2023, AMIFamilyBottlerocket, AMIFamilyWindows2019, AMIFamilyWindows2022, AMIFamilyWindows2025}

// ParseAlias splits an alias. ok is false when it is not family@version with a known family,
// which the CRD's validation refuses.
func ParseAlias(alias string) (a Alias, ok bool) {
	family, version, found := strings.Cut(alias, "@")
	if !found || version == "" {
		return Alias{}, false
	}
	for _, f := range aliasFamilies {
		if strings.ToLower(f) == family {
			return Alias{Family: f, Version: version}, true
		}
	}
	return Alias{}, false
}

// Alias returns the alias of the node class's AMI selector terms, if one term has one.
func (in *EC2NodeClass) Alias() (Alias, bool) {
	for _, t := range in.Spec.AMISelectorTerms {
		if t.Alias != "" {
			return ParseAlias(t.Alias)
		}
	}
	return Alias{}, false
}

// AMIFamily returns the AMI family in effect: spec.amiFamily when set, else the alias's
// family, else Custom (which validation makes unreachable: without an alias amiFamily is
// required).
func (in *EC2NodeClass) AMIFamily() string {
	if in.Spec.AMIFamily != nil {
		return *in.Spec.AMIFamily
	}
	if a, ok := in.Alias(); ok {
		return a.Family
	}
	return AMIFamilyCustom
}

// GetMetadataOptions returns the metadata options with every unset field at its default.
func (in *EC2NodeClassSpec) GetMetadataOptions() MetadataOptions {
	var m MetadataOptions
	if in.MetadataOptions != nil {
		m = *in.MetadataOptions.DeepCopy()
	}
	if m.HTTPEndpoint == nil {
		m.HTTPEndpoint = ptr(DefaultHTTPEndpoint)
	}
	if m.HTTPProtocolIPv6 == nil {
		m.HTTPProtocolIPv6 = ptr(DefaultHTTPProtocolIPv6)
	}
	if m.HTTPPutResponseHopLimit == nil {
		m.HTTPPutResponseHopLimit = ptr(int64(DefaultHTTPPutResponseHopLimit))
	}
	if m.HTTPTokens == nil {
		m.HTTPTokens = ptr(DefaultHTTPTokens)
	}
	return m
}

func ptr[T any](v T) *T { return &v }
