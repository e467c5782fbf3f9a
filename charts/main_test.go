package charts_test

import (
	"log/slog"
	"os"
	"testing"
)

// TestMain quiets the Helm loader's note on every linked CRD ("found symbolic link in path"):
// the links are deliberate (see TestChartCRDsAreTheGeneratedOnes).
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}
