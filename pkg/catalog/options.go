package catalog

import "slices"

// Option configures Load (and, for the root volume and overhead, NewInstanceType).
type Option func(*settings)

type settings struct {
	rootVolume   int64
	overhead     OverheadConfig
	reservations []Reservation
	overrides    []PriceOverride
	zones        []string
}

func newSettings(opts []Option) settings {
	s := settings{rootVolume: DefaultRootVolume, overhead: DefaultOverheadConfig()}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// WithRootVolume sets the root volume size in bytes, which is every node's ephemeral-storage
// capacity (default DefaultRootVolume, 20 GiB).
func WithRootVolume(bytes int64) Option {
	return func(s *settings) { s.rootVolume = bytes }
}

// WithOverhead replaces the overhead parameters (default DefaultOverheadConfig()).
func WithOverhead(cfg OverheadConfig) Option {
	return func(s *settings) { s.overhead = cfg }
}

// WithReservations adds reserved capacity; each reservation becomes one reserved offering of its
// type in its zone. Repeated options add up.
func WithReservations(rs ...Reservation) Option {
	return func(s *settings) { s.reservations = append(s.reservations, rs...) }
}

// WithPriceOverrides adjusts prices; overrides apply in the order given, after the data's
// prices. Repeated options add up.
func WithPriceOverrides(ps ...PriceOverride) Option {
	return func(s *settings) { s.overrides = append(s.overrides, ps...) }
}

// WithZones limits the catalog to the named zones (names or zone IDs) of its region.
func WithZones(zones ...string) Option {
	return func(s *settings) { s.zones = slices.Clone(zones) }
}
