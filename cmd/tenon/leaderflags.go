package main

import (
	"github.com/spf13/pflag"

	"github.com/tenon-sh/tenon/pkg/operator"
)

// registerLeaderFlags adds the leader election's timings, under the names kube-scheduler and
// kube-controller-manager give them. The defaults suit a cluster; tests shorten them so that
// a standby takes over from a killed leader in seconds.
func registerLeaderFlags(fs *pflag.FlagSet, o *operator.Options) {
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 0, "how long a standby waits after the leader's last renewal before it takes the lease (default 15s)")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 0, "how long the leader keeps trying to renew its lease before it gives up leading (default 10s; less than the lease duration)")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 0, "how often candidates try to acquire or renew the lease (default 2s)")
	fs.DurationVar(&o.AccessDeniedFor, "access-denied-timeout", 0, "stop with an error when the API server refuses a cache's list or watch for this long (missing RBAC; default 10s)")
}
