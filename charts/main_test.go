package charts_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TestMain quiets the Helm loader's note on every linked CRD ("found symbolic link in path"):
// the links are deliberate (see TestChartCRDsAreTheGeneratedOnes); and controller-runtime's
// complaint that no logger is set (the operator gets its own, see TENON_TEST_LOGS).
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}
