package interruption

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// The EventBridge detail types and sources the queue acts on.
const (
	DetailSpotInterruption = "EC2 Spot Instance Interruption Warning"
	DetailRebalance        = "EC2 Instance Rebalance Recommendation"
	DetailStateChange      = "EC2 Instance State-change Notification"
	DetailHealth           = "AWS Health Event"
	SourceEC2              = "aws.ec2"
	SourceHealth           = "aws.health"
)

// spotNotice is how long EC2 gives a spot instance after its interruption warning.
const spotNotice = 2 * time.Minute

// Message types, the message_type label of the received-messages metric (Karpenter's).
const (
	typeSpot        = "spot_interrupted"
	typeRebalance   = "rebalance_recommendation"
	typeScheduled   = "scheduled_change"
	typeStopped     = "instance_stopped"
	typeTerminated  = "instance_terminated"
	typeNotActioned = "no_op"
)

// envelope is the part of an EventBridge event every kind shares.
type envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// notice is a parsed message: what happens to which instances, and when.
type notice struct {
	kind      cloudprovider.InterruptionKind
	typ       string // the metric's message_type
	instances []string
	at        time.Time // the event's time
	deadline  time.Time
}

// errMalformed marks a message that is not an EventBridge event of a known shape.
var errMalformed = errors.New("malformed interruption message")

// parse reads one message body. It returns a notice, or (nil, nil) for an event of no kind
// acted on, or an error wrapping errMalformed.
func parse(body string) (*notice, error) {
	var env envelope
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		return nil, fmt.Errorf("%w: not an EventBridge event: %v", errMalformed, err)
	}
	if env.DetailType == "" || env.Source == "" {
		return nil, fmt.Errorf("%w: no detail-type or source", errMalformed)
	}
	if env.Version != "0" {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339, env.Time)
	if err != nil {
		return nil, fmt.Errorf("%w: event time %q: %v", errMalformed, env.Time, err)
	}
	n := &notice{at: at}
	switch {
	case env.Source == SourceEC2 && (env.DetailType == DetailSpotInterruption || env.DetailType == DetailRebalance):
		d, err := instanceDetail(env)
		if err != nil {
			return nil, err
		}
		n.instances = []string{d.InstanceID}
		n.kind, n.typ = cloudprovider.RebalanceRecommendation, typeRebalance
		if env.DetailType == DetailSpotInterruption {
			n.kind, n.typ, n.deadline = cloudprovider.SpotInterruption, typeSpot, at.Add(spotNotice)
		}
	case env.Source == SourceEC2 && env.DetailType == DetailStateChange:
		d, err := instanceDetail(env)
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(d.State) {
		case "stopping", "stopped":
			n.typ = typeStopped
		case "shutting-down", "terminated":
			n.typ = typeTerminated
		default:
			return nil, nil // pending, running: nothing to do
		}
		n.kind, n.instances = cloudprovider.InstanceStopped, []string{d.InstanceID}
	case env.Source == SourceHealth && env.DetailType == DetailHealth:
		var d struct {
			Service           string `json:"service"`
			EventTypeCategory string `json:"eventTypeCategory"`
			StartTime         string `json:"startTime"`
			AffectedEntities  []struct {
				EntityValue string `json:"entityValue"`
			} `json:"affectedEntities"`
		}
		if err := json.Unmarshal(env.Detail, &d); err != nil {
			return nil, fmt.Errorf("%w: %s detail: %v", errMalformed, env.DetailType, err)
		}
		if d.Service != "EC2" || d.EventTypeCategory != "scheduledChange" {
			return nil, nil
		}
		for _, e := range d.AffectedEntities {
			if strings.HasPrefix(e.EntityValue, "i-") {
				n.instances = append(n.instances, e.EntityValue)
			}
		}
		if len(n.instances) == 0 {
			return nil, fmt.Errorf("%w: a scheduled change naming no instance", errMalformed)
		}
		n.kind, n.typ = cloudprovider.ScheduledMaintenance, typeScheduled
		if d.StartTime != "" {
			if n.deadline, err = healthTime(d.StartTime); err != nil {
				return nil, fmt.Errorf("%w: startTime %q: %v", errMalformed, d.StartTime, err)
			}
		}
	default:
		return nil, nil
	}
	return n, nil
}

// ec2Detail is the detail of the EC2 events about one instance.
type ec2Detail struct {
	InstanceID string `json:"instance-id"`
	State      string `json:"state"` // state changes only
}

func instanceDetail(env envelope) (ec2Detail, error) {
	var d ec2Detail
	if err := json.Unmarshal(env.Detail, &d); err != nil {
		return d, fmt.Errorf("%w: %s detail: %v", errMalformed, env.DetailType, err)
	}
	if !strings.HasPrefix(d.InstanceID, "i-") {
		return d, fmt.Errorf("%w: %s names no instance", errMalformed, env.DetailType)
	}
	return d, nil
}

// healthTime parses an AWS Health time: "Sat, 05 Jun 2021 13:00:00 GMT", or RFC 3339.
func healthTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time in RFC 1123 or RFC 3339")
}
