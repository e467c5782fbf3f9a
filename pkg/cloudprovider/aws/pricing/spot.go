package pricing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// RefreshSpot reads the latest spot price of every instance type in every zone from EC2
// DescribeSpotPriceHistory (Linux/UNIX). The pairs it returns replace the spot prices held
// (a pair it no longer returns is no longer sold as spot); an unreadable record is reported and
// its pair keeps the price it had.
func (p *Provider) RefreshSpot(ctx context.Context) error {
	prices, bad, err := p.fetchSpot(ctx)
	if len(prices) > 0 && len(bad) > 0 {
		p.mu.RLock()
		for _, k := range bad {
			if v, ok := p.spot.prices[k]; ok {
				prices[k] = v
			}
		}
		p.mu.RUnlock()
	}
	update(p, &p.spot, "spot", "EC2 spot price history", prices, true, err)
	return err
}

func (p *Provider) fetchSpot(ctx context.Context) (map[spotKey]float64, []spotKey, error) {
	in := &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"},
		// A start time of now asks for the price in force now: one record per type and zone.
		StartTime:  aws.Time(p.opts.Clock.Now()),
		MaxResults: aws.Int32(1000),
	}
	type latest struct {
		price float64
		at    time.Time
	}
	seen := map[spotKey]latest{}
	var bad []error
	var badKeys []spotKey
	pages := ec2.NewDescribeSpotPriceHistoryPaginator(p.ec2, in)
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("pricing: DescribeSpotPriceHistory: %w", err)
		}
		for _, r := range out.SpotPriceHistory {
			k := spotKey{string(r.InstanceType), aws.ToString(r.AvailabilityZone)}
			v := aws.ToString(r.SpotPrice)
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || k.instanceType == "" || k.zone == "" {
				bad = append(bad, fmt.Errorf("pricing: spot price %q of %s in %q is not a positive number", v, k.instanceType, k.zone))
				badKeys = append(badKeys, k)
				continue
			}
			at := aws.ToTime(r.Timestamp)
			if cur, ok := seen[k]; !ok || at.After(cur.at) {
				seen[k] = latest{f, at}
			}
		}
	}
	if len(seen) == 0 && len(bad) == 0 {
		return nil, nil, fmt.Errorf("pricing: DescribeSpotPriceHistory returned no spot prices")
	}
	prices := make(map[spotKey]float64, len(seen))
	for k, l := range seen {
		prices[k] = l.price
	}
	return prices, badKeys, errors.Join(bad...)
}
