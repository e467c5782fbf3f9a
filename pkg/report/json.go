package report

import (
	"encoding/json"
	"io"

	"github.com/tenon-sh/tenon/pkg/sim"
)

// WriteJSON writes the report as indented JSON: the input, the settings, each policy's
// figures and time series, the bound, and the assumptions.
func WriteJSON(w io.Writer, rep *sim.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
