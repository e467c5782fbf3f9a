// Package charts holds tenon's Helm charts and their tests; it has no Go API.
//
//   - tenon: the controller (Deployment, ServiceAccount, least-privilege RBAC, Service, PDB,
//     optional ServiceMonitor), with a values.schema.json that rejects unknown keys.
//   - tenon-crd: the CustomResourceDefinitions, as links to the files `make generate` writes
//     to pkg/apis/crds, so the charts cannot drift from the generated CRDs.
//
// The tests render the charts with the Helm SDK (helm.sh/helm/v4): lint, the schema, a golden
// file of the default manifests, and, against a real kube-apiserver, the controller run as the
// chart's ServiceAccount through provisioning and consolidation, with each RBAC rule removed in
// turn to show that it is needed.
package charts
