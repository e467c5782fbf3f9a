package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Never is the wire form of a NillableDuration that is switched off.
const Never = "Never"

// NillableDuration is a duration that may be switched off. On the wire it is a Go duration
// string ("720h", "30s", "1h30m") or the string "Never"; in Go, Never is a nil Duration.
//
// Mind the zero value: a NillableDuration{} means Never. Objects read from the API server have
// their defaults applied, so an omitted expireAfter arrives as 720h, not as Never.
//
// +kubebuilder:validation:Type=string
// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
type NillableDuration struct {
	// Duration is nil when the value is Never.
	Duration *time.Duration `json:"-"`
}

// NewNillableDuration returns a NillableDuration holding d.
func NewNillableDuration(d time.Duration) NillableDuration { return NillableDuration{Duration: &d} }

// ParseNillableDuration parses "Never" or a Go duration string. Negative durations are refused.
func ParseNillableDuration(s string) (NillableDuration, error) {
	if s == Never {
		return NillableDuration{}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return NillableDuration{}, err
	}
	if d < 0 {
		return NillableDuration{}, fmt.Errorf("duration %q is negative", s)
	}
	return NillableDuration{Duration: &d}, nil
}

// IsNever reports whether the duration is switched off.
func (d NillableDuration) IsNever() bool { return d.Duration == nil }

// String returns the wire form.
func (d NillableDuration) String() string {
	if d.Duration == nil {
		return Never
	}
	return d.Duration.String()
}

// MarshalJSON writes the wire form as a JSON string.
func (d NillableDuration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a JSON string in the wire form. JSON null leaves d unchanged.
func (d *NillableDuration) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string: %w", err)
	}
	parsed, err := ParseNillableDuration(s)
	if err != nil {
		return err
	}
	*d = parsed
	return nil
}

// ToUnstructured lets runtime.DefaultUnstructuredConverter write the wire form rather than the
// Go struct.
func (d NillableDuration) ToUnstructured() interface{} { return d.String() }
