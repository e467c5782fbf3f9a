package interruption

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// FuzzParse: no body makes parse panic; what it accepts names instances and has a kind; what
// it refuses is marked malformed.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		event(DetailSpotInterruption, SourceEC2, `{"instance-id":"i-0123","instance-action":"terminate"}`),
		event(DetailRebalance, SourceEC2, `{"instance-id":"i-0123"}`),
		event(DetailStateChange, SourceEC2, `{"instance-id":"i-0123","state":"stopping"}`),
		health(epoch, "i-1", "i-2"),
		`{"version":"0"}`, `[]`, `null`, "\x00\xff", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		n, err := parse(body)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error not marked malformed: %v", err)
			}
			return
		}
		if n == nil {
			return
		}
		if len(n.instances) == 0 || n.typ == "" {
			t.Fatalf("notice without instances or type: %+v", n)
		}
		for _, i := range n.instances {
			if !strings.HasPrefix(i, "i-") {
				t.Fatalf("instance %q", i)
			}
		}
		switch n.kind {
		case cloudprovider.SpotInterruption, cloudprovider.RebalanceRecommendation, cloudprovider.ScheduledMaintenance, cloudprovider.InstanceStopped:
		default:
			t.Fatalf("kind %q", n.kind)
		}
	})
}

// The shapes each event kind parses to, including the Health event's time formats.
func TestParse(t *testing.T) {
	at := epoch
	for _, tc := range []struct {
		name, body string
		kind       cloudprovider.InterruptionKind
		typ        string
		instances  string
		deadline   time.Time
	}{
		{"spot", event(DetailSpotInterruption, SourceEC2, `{"instance-id":"i-1","instance-action":"terminate"}`), cloudprovider.SpotInterruption, typeSpot, "i-1", at.Add(2 * time.Minute)},
		{"rebalance", event(DetailRebalance, SourceEC2, `{"instance-id":"i-1"}`), cloudprovider.RebalanceRecommendation, typeRebalance, "i-1", time.Time{}},
		{"stopped", event(DetailStateChange, SourceEC2, `{"instance-id":"i-1","state":"stopped"}`), cloudprovider.InstanceStopped, typeStopped, "i-1", time.Time{}},
		{"terminated", event(DetailStateChange, SourceEC2, `{"instance-id":"i-1","state":"Shutting-Down"}`), cloudprovider.InstanceStopped, typeTerminated, "i-1", time.Time{}},
		{"health RFC 1123", health(at, "i-1", "i-2", "vol-3"), cloudprovider.ScheduledMaintenance, typeScheduled, "i-1,i-2", at.Add(time.Hour)},
		{"health RFC 3339", event(DetailHealth, SourceHealth, `{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"2026-12-01T13:00:00Z","affectedEntities":[{"entityValue":"i-9"}]}`),
			cloudprovider.ScheduledMaintenance, typeScheduled, "i-9", at.Add(time.Hour)},
	} {
		n, err := parse(tc.body)
		if err != nil || n == nil {
			t.Fatalf("%s: %+v %v", tc.name, n, err)
		}
		if n.kind != tc.kind || n.typ != tc.typ || strings.Join(n.instances, ",") != tc.instances || !n.deadline.Equal(tc.deadline) || !n.at.Equal(at) {
			t.Errorf("%s: %+v", tc.name, n)
		}
	}
	for _, body := range []string{
		event(DetailStateChange, SourceEC2, `{"instance-id":"i-1","state":"pending"}`),
		event(DetailSpotInterruption, "aws.other", `{"instance-id":"i-1"}`),
		strings.Replace(event(DetailRebalance, SourceEC2, `{"instance-id":"i-1"}`), `"version":"0"`, `"version":"1"`, 1),
	} {
		if n, err := parse(body); n != nil || err != nil {
			t.Errorf("%s: %+v %v, want not actionable", body, n, err)
		}
	}
}
