package metrics

import (
	"regexp"

	"github.com/prometheus/client_golang/prometheus"
)

var fqNameRE = regexp.MustCompile(`fqName: "([^"]*)"`)

// FQName returns the name a descriptor describes. prometheus.Desc keeps it unexported; its
// String form is documented to carry it.
func FQName(d *prometheus.Desc) string {
	if m := fqNameRE.FindStringSubmatch(d.String()); m != nil {
		return m[1]
	}
	return ""
}
