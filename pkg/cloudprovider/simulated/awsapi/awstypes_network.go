package awsapi

import "github.com/tenon-sh/tenon/pkg/catalog"

// networkLimits describes a shape's network interfaces as DescribeInstanceTypes does: the
// interfaces in all, the IPv4 addresses each holds, and the network cards (card 0 the
// default), each with its share of the interfaces and of the baseline bandwidth. A client
// applying the VPC CNI's formula to card 0 (ENIs × (IPv4 − 1) + 2) gets the shape's MaxPods.
//
// The shared data lacks ENI limits for a few types (hpc, u-*tb1, trn2, g3, p2). For those the
// endpoint reports one card whose limits give MaxPods: the largest usual per-interface address
// count a that divides MaxPods − 2 as (a − 1) × n, with n interfaces.
func networkLimits(sh *catalog.Shape) (total, ipv4 int, cards []networkCard) {
	total, ipv4, card0 := sh.ENIs, sh.IPv4PerENI, sh.CardENIs
	if card0 == 0 || card0 > total {
		card0 = total
	}
	if total == 0 || ipv4 == 0 {
		total, ipv4 = 1, 2
		for _, a := range []int{50, 30, 15, 10, 6, 4, 3, 2} {
			if n := sh.MaxPods - 2; n > 0 && n%(a-1) == 0 {
				total, ipv4 = n/(a-1), a
				break
			}
		}
		card0 = total
	}
	n := (total + card0 - 1) / card0
	perCard := sh.NetworkGbps / float64(n)
	perf := networkPerformance(sh.NetworkGbps)
	for i, left := 0, total; i < n; i++ {
		enis := min(card0, left)
		left -= enis
		cards = append(cards, networkCard{
			NetworkCardIndex: i, NetworkPerformance: perf, MaximumNetworkInterfaces: enis,
			BaselineBandwidthInGbps: perCard, PeakBandwidthInGbps: perCard,
		})
	}
	return total, ipv4, cards
}
