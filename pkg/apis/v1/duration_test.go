package v1_test

import (
	"encoding/json"
	"testing"
	"time"

	v1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestNillableDurationJSON(t *testing.T) {
	for _, tc := range []struct {
		in, out string
		never   bool
		d       time.Duration
	}{
		{in: `"Never"`, out: `"Never"`, never: true},
		{in: `"720h"`, out: `"720h0m0s"`, d: 720 * time.Hour},
		{in: `"0s"`, out: `"0s"`, d: 0},
		{in: `"1h30m15s"`, out: `"1h30m15s"`, d: time.Hour + 30*time.Minute + 15*time.Second},
	} {
		var d v1.NillableDuration
		if err := json.Unmarshal([]byte(tc.in), &d); err != nil {
			t.Fatalf("unmarshal %s: %v", tc.in, err)
		}
		if d.IsNever() != tc.never || (!tc.never && *d.Duration != tc.d) {
			t.Errorf("unmarshal %s = %v, want never=%v d=%v", tc.in, d, tc.never, tc.d)
		}
		b, err := json.Marshal(d)
		if err != nil || string(b) != tc.out {
			t.Errorf("marshal %s = %s, %v; want %s", tc.in, b, err, tc.out)
		}
	}
}

func TestNillableDurationRejects(t *testing.T) {
	for _, in := range []string{`"-1s"`, `"30d"`, `""`, `5`, `"never"`} {
		var d v1.NillableDuration
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("unmarshal %s: no error, got %v", in, d)
		}
	}
	d := v1.NewNillableDuration(time.Minute)
	if err := json.Unmarshal([]byte(`null`), &d); err != nil || d.IsNever() || *d.Duration != time.Minute {
		t.Errorf("null changed the duration: %v, %v", d, err)
	}
}

// The unstructured converter (used by client-go's dynamic and apply paths) must write the wire
// form, not the Go struct.
func TestNillableDurationToUnstructured(t *testing.T) {
	np := &v1.NodePool{}
	np.Spec.Template.Spec.ExpireAfter = v1.NewNillableDuration(720 * time.Hour)
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(np)
	if err != nil {
		t.Fatal(err)
	}
	spec := u["spec"].(map[string]interface{})
	if got := spec["template"].(map[string]interface{})["spec"].(map[string]interface{})["expireAfter"]; got != "720h0m0s" {
		t.Errorf("expireAfter = %#v, want 720h0m0s", got)
	}
	if got := spec["disruption"].(map[string]interface{})["consolidateAfter"]; got != v1.Never {
		t.Errorf("consolidateAfter = %#v, want Never", got)
	}
	back := &v1.NodePool{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, back); err != nil {
		t.Fatal(err)
	}
	if d := back.Spec.Template.Spec.ExpireAfter; d.IsNever() || *d.Duration != 720*time.Hour {
		t.Errorf("FromUnstructured expireAfter = %v", d)
	}
}
