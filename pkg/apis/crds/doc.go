// Package crds embeds the CustomResourceDefinitions that hack/generate.sh derives from the API
// types under pkg/apis, for installing them into an API server (envtest, tenon up, the Helm
// chart). The YAML files in this directory are generated; do not edit them by hand.
package crds
