package awsapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/tenon-sh/tenon/pkg/cloudprovider"
)

// The services, as Fault.Service names them.
const (
	ServiceEC2     = "ec2"
	ServiceIAM     = "iam"
	ServiceSSM     = "ssm"
	ServiceSQS     = "sqs"
	ServicePricing = "pricing"
)

const (
	svcEC2     = ServiceEC2
	svcIAM     = ServiceIAM
	svcSSM     = ServiceSSM
	svcSQS     = ServiceSQS
	svcPricing = ServicePricing
)

// FaultKind is what an injected fault does to a request.
type FaultKind int

const (
	// FaultThrottle answers with the service's throttling error, as the real service does:
	// EC2 RequestLimitExceeded (503), IAM Throttling (400), SSM and Pricing ThrottlingException
	// (400), SQS RequestThrottled (403).
	FaultThrottle FaultKind = iota
	// FaultServerError answers with the service's internal error (HTTP 500).
	FaultServerError
	// FaultSlow delays the request by Fault.Delay (real time) and then serves it.
	FaultSlow
	// FaultAccessDenied answers as the service does when the caller's policy lacks the action:
	// EC2 UnauthorizedOperation (403), IAM AccessDenied (403), SSM, SQS and Pricing
	// AccessDeniedException (400). It is definitive: retrying does not help.
	FaultAccessDenied
	// FaultLostResponse serves the request, so that it takes effect (a CreateFleet launches,
	// a TerminateInstances terminates), and then answers with the service's internal error
	// (HTTP 500) instead of the result, as when the answer is lost on its way back (a 500
	// rather than a closed connection: the SDK retries it for every service, and the endpoint
	// stays a plain http.Handler). A retried CreateFleet carries the same ClientToken, which
	// the endpoint answers with the fleet it already launched, as EC2 does.
	FaultLostResponse
)

// Fault is injected into the requests it matches.
type Fault struct {
	// Service and Action select the requests ("" matches any). Action is the operation name,
	// e.g. "CreateFleet" or "ReceiveMessage".
	Service string
	Action  string
	Kind    FaultKind
	// Delay is FaultSlow's delay.
	Delay time.Duration
	// Count is how many matching requests the fault affects; 0 means every one until
	// ClearFaults.
	Count int

	hits int
}

// InjectFault adds a fault. Faults apply in the order injected; the first that matches a
// request decides it.
func (s *Server) InjectFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// FaultHits returns how many requests the injected faults have affected, in order.
func (s *Server) FaultHits() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, len(s.faults))
	for i, f := range s.faults {
		out[i] = f.hits
	}
	return out
}

// SetInsufficientCapacity makes an offering (instance type, zone, capacity type) report
// InsufficientInstanceCapacity (true) or have the capacity the engine gives it (false).
func (s *Server) SetInsufficientCapacity(instanceType, zone, capacityType string, ice bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := cloudprovider.Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}
	if ice {
		s.ice[o] = true
	} else {
		delete(s.ice, o)
	}
}

// fault applies the first fault matching a request. It returns the error to answer with
// instead of serving the request (now), or the error to answer with after serving it (lost,
// for FaultLostResponse), or neither once any delay has passed (or at once when no fault
// matches).
func (s *Server) fault(ctx context.Context, service, action string) (now, lost *apiError) {
	s.mu.Lock()
	var hit *Fault
	for _, f := range s.faults {
		if (f.Service == "" || f.Service == service) && (f.Action == "" || f.Action == action) && (f.Count == 0 || f.hits < f.Count) {
			f.hits++
			hit = f
			break
		}
	}
	var kind FaultKind
	var delay time.Duration
	if hit != nil {
		kind, delay = hit.Kind, hit.Delay
	}
	s.mu.Unlock()
	if hit == nil {
		return nil, nil
	}
	msg := fmt.Sprintf("injected fault on %s %s", service, action)
	switch kind {
	case FaultLostResponse:
		return nil, internalError(service, msg+": the request was served and its answer lost")
	case FaultThrottle:
		return throttled(service), nil
	case FaultServerError:
		return internalError(service, msg), nil
	case FaultAccessDenied:
		return accessDenied(service, action), nil
	default:
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		return nil, nil
	}
}

// throttled is the service's throttling error.
func throttled(service string) *apiError {
	switch service {
	case svcEC2:
		return &apiError{Status: http.StatusServiceUnavailable, Code: "RequestLimitExceeded", Message: "Request limit exceeded."}
	case svcIAM:
		return &apiError{Status: http.StatusBadRequest, Code: "Throttling", Message: "Rate exceeded"}
	case svcSQS:
		return &apiError{Status: http.StatusForbidden, Code: "RequestThrottled", Message: "Rate exceeded"}
	default:
		return &apiError{Status: http.StatusBadRequest, Code: "ThrottlingException", Message: "Rate exceeded"}
	}
}

// internalError is the service's internal error (HTTP 500).
func internalError(service, msg string) *apiError {
	switch service {
	case svcEC2:
		return &apiError{Status: http.StatusInternalServerError, Code: "InternalError", Message: msg}
	case svcIAM:
		return &apiError{Status: http.StatusInternalServerError, Code: "ServiceFailure", Message: msg}
	default:
		return &apiError{Status: http.StatusInternalServerError, Code: "InternalServerError", Message: msg}
	}
}

// accessDenied is the service's answer to a caller whose policy lacks the action.
func accessDenied(service, action string) *apiError {
	switch service {
	case svcEC2:
		return &apiError{Status: http.StatusForbidden, Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation: " + action}
	case svcIAM:
		return &apiError{Status: http.StatusForbidden, Code: "AccessDenied", Message: "User is not authorized to perform: iam:" + action}
	default:
		return &apiError{Status: http.StatusBadRequest, Code: "AccessDeniedException", Message: "User is not authorized to perform: " + service + ":" + action}
	}
}
