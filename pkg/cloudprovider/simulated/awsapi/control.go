package awsapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ControlPrefix is the path under which the endpoint serves its control API, for processes
// that drive a running endpoint (a test harness, tenon up) without the Go methods:
//
//	POST   /_control/faults     {"service":"ec2","action":"CreateFleet","kind":"throttle|server-error|slow|denied|lost","delay":"2s","count":3}
//	DELETE /_control/faults
//	POST   /_control/ice        {"instanceType":"m5.large","zone":"us-east-1a","capacityType":"on-demand","ice":true}
//	POST   /_control/interrupt  {"instanceId":"i-…","kind":"SpotInterruption|RebalanceRecommendation|ScheduledMaintenance|InstanceStopped"}
//	POST   /_control/release    {"al2023":"v20261201","bottlerocket":"1.51.0"}
//
// Each answers 204 on success and 400 with a plain-text reason otherwise. AWS requests are
// all POST /, so the prefix cannot collide with them.
const ControlPrefix = "/_control/"

func (s *Server) serveControl(w http.ResponseWriter, r *http.Request) {
	fail := func(format string, args ...any) {
		http.Error(w, fmt.Sprintf(format, args...), http.StatusBadRequest)
	}
	decode := func(v any) bool {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			fail("%s %s: %v", r.Method, r.URL.Path, err)
			return false
		}
		return true
	}
	switch what := strings.TrimPrefix(r.URL.Path, ControlPrefix); {
	case what == "faults" && r.Method == http.MethodDelete:
		s.ClearFaults()
	case what == "faults" && r.Method == http.MethodPost:
		var in struct {
			Service, Action, Kind, Delay string
			Count                        int
		}
		if !decode(&in) {
			return
		}
		f := Fault{Service: in.Service, Action: in.Action, Count: in.Count}
		switch in.Kind {
		case "throttle":
			f.Kind = FaultThrottle
		case "server-error":
			f.Kind = FaultServerError
		case "denied":
			f.Kind = FaultAccessDenied
		case "lost":
			f.Kind = FaultLostResponse
		case "slow":
			d, err := time.ParseDuration(in.Delay)
			if err != nil || d <= 0 {
				fail("a slow fault needs a positive delay, not %q", in.Delay)
				return
			}
			f.Kind, f.Delay = FaultSlow, d
		default:
			fail("fault kind %q is not throttle, server-error, slow, denied or lost", in.Kind)
			return
		}
		if f.Count < 0 {
			fail("negative count %d", f.Count)
			return
		}
		s.InjectFault(f)
	case what == "ice" && r.Method == http.MethodPost:
		var in struct {
			InstanceType, Zone, CapacityType string
			ICE                              bool
		}
		if !decode(&in) {
			return
		}
		if in.InstanceType == "" || in.Zone == "" || in.CapacityType == "" {
			fail("instanceType, zone and capacityType are required")
			return
		}
		s.SetInsufficientCapacity(in.InstanceType, in.Zone, in.CapacityType, in.ICE)
	case what == "interrupt" && r.Method == http.MethodPost:
		var in struct{ InstanceID, Kind string }
		if !decode(&in) {
			return
		}
		if err := s.Interrupt(in.InstanceID, in.Kind); err != nil {
			fail("%v", err)
			return
		}
	case what == "release" && r.Method == http.MethodPost:
		var in struct{ AL2023, Bottlerocket string }
		if !decode(&in) {
			return
		}
		s.PublishRelease(in.AL2023, in.Bottlerocket)
	default:
		http.Error(w, fmt.Sprintf("no control operation %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
