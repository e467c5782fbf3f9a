package commitment

import (
	"strconv"
	"strings"
)

// Family and Size split an EC2 instance type name: "m7i.2xlarge" is family m7i, size 2xlarge.
func splitType(name string) (family, size string) {
	family, size, _ = strings.Cut(name, ".")
	return family, size
}

// Family returns the instance family of an instance type name ("m7i" for "m7i.2xlarge").
func Family(instanceType string) string {
	f, _ := splitType(instanceType)
	return f
}

// Units returns the normalization factor AWS uses to apply a regional Linux Reserved Instance
// across the sizes of a family: small is 1, medium 2, large 4, xlarge 8 and Nxlarge 8N, nano
// 0.25 and micro 0.5. A metal size has no factor in its name; it is counted at 2 units per vCPU
// (vcpu), the ratio of the named sizes in the general-purpose and compute families (m5.metal
// equals m5.24xlarge). Zero when the size is not one of these.
func Units(instanceType string, vcpu int64) float64 {
	_, size := splitType(instanceType)
	switch size {
	case "nano":
		return 0.25
	case "micro":
		return 0.5
	case "small":
		return 1
	case "medium":
		return 2
	case "large":
		return 4
	case "xlarge":
		return 8
	}
	if strings.HasPrefix(size, "metal") {
		return float64(vcpu) * 2
	}
	if n, ok := strings.CutSuffix(size, "xlarge"); ok {
		if k, err := strconv.Atoi(n); err == nil && k > 0 {
			return 8 * float64(k)
		}
	}
	return 0
}
