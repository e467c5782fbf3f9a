package awsapi

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
	"github.com/tenon-sh/tenon/pkg/cloudprovider/simulated/cloud"
)

// The EventBridge detail types and sources the interruption queue receives.
const (
	DetailSpotInterruption = "EC2 Spot Instance Interruption Warning"
	DetailRebalance        = "EC2 Instance Rebalance Recommendation"
	DetailStateChange      = "EC2 Instance State-change Notification"
	DetailHealth           = "AWS Health Event"
	SourceEC2              = "aws.ec2"
	SourceHealth           = "aws.health"
)

// retirementEventType is the AWS Health event type of a scheduled instance retirement.
const retirementEventType = "AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED"

// eventBridgeMessage is the envelope EventBridge delivers to an SQS target.
type eventBridgeMessage struct {
	Version    string    `json:"version"`
	ID         string    `json:"id"`
	DetailType string    `json:"detail-type"`
	Source     string    `json:"source"`
	Account    string    `json:"account"`
	Time       string    `json:"time"`
	Region     string    `json:"region"`
	Resources  []string  `json:"resources"`
	Detail     any       `json:"detail"`
	at         time.Time `json:"-"`
}

type spotDetail struct {
	InstanceID     string `json:"instance-id"`
	InstanceAction string `json:"instance-action"`
}

type rebalanceDetail struct {
	InstanceID string `json:"instance-id"`
}

type stateChangeDetail struct {
	InstanceID string `json:"instance-id"`
	State      string `json:"state"`
}

type healthDetail struct {
	EventArn          string              `json:"eventArn"`
	Service           string              `json:"service"`
	EventTypeCode     string              `json:"eventTypeCode"`
	EventTypeCategory string              `json:"eventTypeCategory"`
	StartTime         string              `json:"startTime"`
	EndTime           string              `json:"endTime"`
	EventDescription  []healthDescription `json:"eventDescription"`
	AffectedEntities  []healthEntity      `json:"affectedEntities"`
}

type healthDescription struct {
	Language          string `json:"language"`
	LatestDescription string `json:"latestDescription"`
}

type healthEntity struct {
	EntityValue string `json:"entityValue"`
}

// interruptionKind maps the names Interrupt accepts (the engine's kinds, or the EventBridge
// detail types) to the engine's kinds.
func interruptionKind(kind string) cloudprovider.InterruptionKind {
	switch kind {
	case DetailSpotInterruption:
		return cloudprovider.SpotInterruption
	case DetailRebalance:
		return cloudprovider.RebalanceRecommendation
	case DetailHealth:
		return cloudprovider.ScheduledMaintenance
	case DetailStateChange:
		return cloudprovider.InstanceStopped
	}
	return cloudprovider.InterruptionKind(kind)
}

var instanceEventKinds = map[cloud.EventKind]InstanceEventKind{
	cloud.EventRunning: InstanceRunning, cloud.EventRegistered: InstanceRegistered, cloud.EventDevicesReady: InstanceDevicesReady,
	cloud.EventTerminating: InstanceTerminating, cloud.EventTerminated: InstanceTerminated,
}

// handleEvent turns an engine event into OnInstance events and interruption-queue messages.
// Callers hold mu.
func (s *Server) handleEvent(ev cloud.Event) {
	inst := s.instances[ev.Instance]
	if inst == nil {
		return
	}
	ei, ok := s.engine.Instance(ev.Instance)
	if !ok {
		return
	}
	if k, ok := instanceEventKinds[ev.Kind]; ok && s.opts.OnInstance != nil {
		s.pending = append(s.pending, InstanceEvent{Kind: k, At: ev.At, Instance: s.info(ei, inst)})
	}
	switch ev.Kind {
	case cloud.EventTerminating:
		state := "shutting-down"
		if ei.Reason == cloud.ReasonStopped {
			state = "stopping"
		}
		s.publish(s.message(DetailStateChange, SourceEC2, ev.At, ei.ID, stateChangeDetail{InstanceID: ei.ID, State: state}))
	case cloud.EventTerminated:
		state := "terminated"
		if ei.Reason == cloud.ReasonStopped {
			state = "stopped"
		}
		s.publish(s.message(DetailStateChange, SourceEC2, ev.At, ei.ID, stateChangeDetail{InstanceID: ei.ID, State: state}))
	case cloud.EventMessage:
		switch ev.Message.Kind {
		case cloudprovider.SpotInterruption:
			s.publish(s.message(DetailSpotInterruption, SourceEC2, ev.At, ei.ID, spotDetail{InstanceID: ei.ID, InstanceAction: "terminate"}))
		case cloudprovider.RebalanceRecommendation:
			s.publish(s.message(DetailRebalance, SourceEC2, ev.At, ei.ID, rebalanceDetail{InstanceID: ei.ID}))
		case cloudprovider.ScheduledMaintenance:
			id := s.nextID("evt")
			s.publish(s.message(DetailHealth, SourceHealth, ev.At, ei.ID, healthDetail{
				EventArn:          fmt.Sprintf("arn:aws:health:%s::event/EC2/%s/%s_%s", s.region, retirementEventType, retirementEventType, id),
				Service:           "EC2",
				EventTypeCode:     retirementEventType,
				EventTypeCategory: "scheduledChange",
				StartTime:         ev.Message.Deadline.UTC().Format(time.RFC1123),
				EndTime:           ev.Message.Deadline.Add(7 * 24 * time.Hour).UTC().Format(time.RFC1123),
				EventDescription: []healthDescription{{Language: "en_US", LatestDescription: fmt.Sprintf(
					"EC2 has detected degradation of the underlying hardware hosting your Amazon EC2 instance %s in the %s region. The instance is scheduled for retirement at %s.",
					ei.ID, s.region, ev.Message.Deadline.UTC().Format(time.RFC1123))}},
				AffectedEntities: []healthEntity{{EntityValue: ei.ID}},
			}))
		}
	}
}

func (s *Server) message(detailType, source string, at time.Time, instanceID string, detail any) eventBridgeMessage {
	return eventBridgeMessage{
		Version: "0", ID: newUUID(s.nextID("m")), DetailType: detailType, Source: source, Account: s.opts.Account,
		Time: at.UTC().Format(time.RFC3339), Region: s.region,
		Resources: []string{fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", s.region, s.opts.Account, instanceID)},
		Detail:    detail, at: at,
	}
}

// publish sends an EventBridge message to the interruption queue, if one is configured.
func (s *Server) publish(m eventBridgeMessage) {
	q := s.queues[s.opts.InterruptionQueue]
	if s.opts.InterruptionQueue == "" || q == nil {
		return
	}
	body, err := json.Marshal(m)
	if err != nil {
		return
	}
	s.enqueue(q, string(body), m.at)
}

// newUUID formats an ID as a UUID-shaped string.
func newUUID(seed string) string {
	h := resourceID("uuid", seed)[6:] // 16 hex digits
	h2 := resourceID("uuid2", seed)[7:]
	return fmt.Sprintf("%s-%s-4%s-8%s-%s", h[:8], h[8:12], h[12:15], h2[:3], h2[3:15])
}
