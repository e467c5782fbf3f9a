// Package pricing keeps the prices of a region's instance types for the AWS provider:
// on-demand prices from the AWS Price List (Pricing API GetProducts, service AmazonEC2: Linux,
// no pre-installed software, capacity status Used, shared tenancy for virtualised types and
// dedicated for bare metal, as Karpenter's AWS provider asks) and spot prices per instance type
// and zone from EC2 DescribeSpotPriceHistory (the latest price of each pair).
//
// Until the first successful refresh of each kind, prices come from the catalog embedded in
// the binary (pkg/catalog). A refresh that fails keeps the prices already held: the embedded
// ones, or the last ones the APIs returned, which are newer. Each change between those states
// is logged once, never per lookup. With Options.IsolatedVPC the Pricing API (which has no VPC
// endpoint) is never called and on-demand prices stay the embedded ones; spot prices are still
// read from EC2.
//
// A price document that cannot be read (not JSON, no instance type, no on-demand price, a
// price that is not a positive number) is reported as an error naming the product; the other
// products' prices still apply and the bad product keeps the price it had.
//
// Provider.Start refreshes on Options.RefreshInterval (12 hours, as upstream), retrying
// failures every Options.RetryInterval; it is a controller-runtime Runnable that runs on every
// replica, so a new leader has prices at once.
package pricing
