package pricing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// RefreshOnDemand reads the region's on-demand prices from the Pricing API. With IsolatedVPC
// it does nothing. Prices of readable products apply even when others cannot be read; the
// error then names each unreadable product.
func (p *Provider) RefreshOnDemand(ctx context.Context) error {
	if p.opts.IsolatedVPC {
		return nil
	}
	prices, err := p.fetchOnDemand(ctx)
	update(p, &p.onDemand, "on-demand", "Pricing API", prices, false, err)
	return err
}

// The two product families EC2 instances are priced under: virtualised types with shared
// tenancy, and bare-metal types, which the price list files under dedicated tenancy.
var onDemandQueries = [][2]string{
	{"Shared", "Compute Instance"},
	{"Dedicated", "Compute Instance (bare metal)"},
}

func (p *Provider) fetchOnDemand(ctx context.Context) (map[string]float64, error) {
	currency := "USD"
	if strings.HasPrefix(p.opts.Region, "cn-") {
		currency = "CNY"
	}
	prices := map[string]float64{}
	var bad []error
	for _, q := range onDemandQueries {
		in := &pricing.GetProductsInput{
			ServiceCode: aws.String("AmazonEC2"),
			Filters: []pricingtypes.Filter{
				term("regionCode", p.opts.Region), term("serviceCode", "AmazonEC2"),
				term("preInstalledSw", "NA"), term("operatingSystem", "Linux"),
				term("capacitystatus", "Used"), term("marketoption", "OnDemand"),
				term("tenancy", q[0]), term("productFamily", q[1]),
			},
			MaxResults: aws.Int32(100),
		}
		pages := pricing.NewGetProductsPaginator(p.pricing, in)
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("pricing: GetProducts (%s): %w", q[1], err)
			}
			for _, doc := range out.PriceList {
				name, price, err := parseProduct(doc, currency)
				if err != nil {
					bad = append(bad, err)
					continue
				}
				prices[name] = price
			}
		}
	}
	if len(prices) == 0 && len(bad) == 0 {
		return nil, fmt.Errorf("pricing: GetProducts returned no on-demand prices for %s", p.opts.Region)
	}
	return prices, errors.Join(bad...)
}

func term(field, value string) pricingtypes.Filter {
	return pricingtypes.Filter{Field: aws.String(field), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String(value)}
}

// priceDocument is the part of a price-list product the provider reads.
type priceDocument struct {
	Product struct {
		SKU        string `json:"sku"`
		Attributes struct {
			InstanceType string `json:"instanceType"`
		} `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// parseProduct reads one price-list document: its instance type and its hourly on-demand
// price in currency. Errors name the product (its instance type, else its SKU, else the
// document's start).
func parseProduct(doc, currency string) (string, float64, error) {
	var d priceDocument
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return "", 0, fmt.Errorf("pricing: product %q: not a price-list document: %v", prefix(doc), err)
	}
	name := d.Product.Attributes.InstanceType
	if name == "" {
		return "", 0, fmt.Errorf("pricing: product %s: no instanceType attribute", orUnknown(d.Product.SKU))
	}
	what := fmt.Sprintf("pricing: product %s (SKU %s)", name, orUnknown(d.Product.SKU))
	found := false
	price := 0.0
	for _, t := range d.Terms.OnDemand {
		for _, dim := range t.PriceDimensions {
			v, ok := dim.PricePerUnit[currency]
			if !ok {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
				return "", 0, fmt.Errorf("%s: on-demand price %q %s is not a positive number", what, v, currency)
			}
			if found && f != price {
				return "", 0, fmt.Errorf("%s: two on-demand prices, %g and %g %s", what, price, f, currency)
			}
			found, price = true, f
		}
	}
	if !found {
		return "", 0, fmt.Errorf("%s: no on-demand price in %s", what, currency)
	}
	return name, price, nil
}

func prefix(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "(no SKU)"
	}
	return s
}
