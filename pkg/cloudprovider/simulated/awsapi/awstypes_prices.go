package awsapi

import "maps"

// spotPair is an instance type in a zone (by name).
type spotPair struct{ instanceType, zone string }

// SetSpotPrice makes DescribeSpotPriceHistory report price (USD per hour) for the instance
// type's spot offering in the zone from now on; a price of 0 restores the catalog's. It changes
// what the price history says, not what the engine charges.
func (s *Server) SetSpotPrice(instanceType, zone string, price float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if price == 0 {
		delete(s.spotOverrides, spotPair{instanceType, zone})
		return
	}
	if s.spotOverrides == nil {
		s.spotOverrides = map[spotPair]float64{}
	}
	s.spotOverrides[spotPair{instanceType, zone}] = price
}

// SetPriceDocument makes GetProducts return doc, verbatim, in place of the instance type's
// price-list document (a fault to feed a malformed product to a client); "" restores it.
func (s *Server) SetPriceDocument(instanceType, doc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if doc == "" {
		delete(s.docOverrides, instanceType)
		return
	}
	if s.docOverrides == nil {
		s.docOverrides = map[string]string{}
	}
	s.docOverrides[instanceType] = doc
}

func (s *Server) priceDocOverrides() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.docOverrides)
}
