package awsapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

func (e *env) control(t *testing.T, method, path, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, e.url+ControlPrefix+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestTheControlAPIInjectsFaultsICEAndInterruptions(t *testing.T) {
	e := newEnv(t, Options{InterruptionQueue: "q"})
	if code := e.control(t, http.MethodPost, "faults", `{"service":"ec2","action":"DescribeSubnets","kind":"throttle"}`); code != http.StatusNoContent {
		t.Fatalf("inject: %d", code)
	}
	_, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	wantCode(t, err, "RequestLimitExceeded")
	if code := e.control(t, http.MethodDelete, "faults", ""); code != http.StatusNoContent {
		t.Fatalf("clear: %d", code)
	}
	if _, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{}); err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]int{
		`{"kind":"slow","delay":"-1s"}`: http.StatusBadRequest,
		`{"kind":"explode"}`:            http.StatusBadRequest,
		`{"kind":"throttle","bogus":1}`: http.StatusBadRequest,
	} {
		if code := e.control(t, http.MethodPost, "faults", body); code != want {
			t.Errorf("%s: %d, want %d", body, code, want)
		}
	}
	if code := e.control(t, http.MethodPost, "ice", `{"instanceType":"m5.large","zone":"us-east-1a","capacityType":"on-demand","ice":true}`); code != http.StatusNoContent {
		t.Fatalf("ice: %d", code)
	}
	sn := e.subnets(t)
	e.template(t, "tenon-lt", "x86_64", nil)
	out, err := e.ec2.CreateFleet(ctx, fleet("tenon-lt", ec2types.DefaultTargetCapacityTypeOnDemand, 1, ovr("m5.large", sn["us-east-1a"])))
	if err != nil || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "InsufficientInstanceCapacity" {
		t.Fatalf("after ICE by the control API: %+v (%v)", out.Errors, err)
	}
	spot := e.launch(t, ec2types.DefaultTargetCapacityTypeSpot, 1)[0]
	if code := e.control(t, http.MethodPost, "interrupt", `{"instanceId":"`+spot+`","kind":"SpotInterruption"}`); code != http.StatusNoContent {
		t.Fatalf("interrupt: %d", code)
	}
	if msgs := e.receiveAll(t, "q"); len(msgs) != 1 || msgs[0]["detail-type"] != DetailSpotInterruption {
		t.Fatalf("messages %v", msgs)
	}
	if code := e.control(t, http.MethodPost, "interrupt", `{"instanceId":"i-0000000000000000f","kind":"SpotInterruption"}`); code != http.StatusBadRequest {
		t.Errorf("interrupting an unknown instance: %d", code)
	}
	// A lost answer: the instance terminates, and the caller hears a 500.
	if code := e.control(t, http.MethodPost, "faults", `{"service":"ec2","action":"TerminateInstances","kind":"lost","count":1}`); code != http.StatusNoContent {
		t.Fatalf("inject lost: %d", code)
	}
	doomed := e.launch(t, ec2types.DefaultTargetCapacityTypeOnDemand, 1)[0]
	_, err = e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{doomed}})
	if err != nil {
		t.Fatalf("the SDK's retry of a lost TerminateInstances: %v", err)
	}
	if hits := e.s.FaultHits(); len(hits) != 1 || hits[0] != 1 {
		t.Fatalf("lost-answer fault hits %v, want [1]", hits)
	}
	for _, in := range e.s.Instances() {
		if in.ID == doomed && (in.State == "pending" || in.State == "running") {
			t.Fatalf("the TerminateInstances whose answer was lost did not take effect: %s is %s", doomed, in.State)
		}
	}
	e.control(t, http.MethodDelete, "faults", "")
	if code := e.control(t, http.MethodGet, "nothing", ""); code != http.StatusNotFound {
		t.Errorf("unknown operation: %d", code)
	}
}
