package v1alpha1_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-sh/tenon/pkg/apis/sim/v1alpha1"
)

func TestHash(t *testing.T) {
	base := func() *v1alpha1.SimNodeClass {
		return &v1alpha1.SimNodeClass{Spec: v1alpha1.SimNodeClassSpec{
			Labels: map[string]string{"a": "1", "b": "2"},
			Tags:   map[string]string{"owner": "me"},
		}}
	}
	h := base().Hash()
	twenty := resource.MustParse("20Gi")
	same := map[string]func(*v1alpha1.SimNodeClassSpec){
		"explicit default root volume": func(s *v1alpha1.SimNodeClassSpec) { s.RootVolumeSize = &twenty },
		"delays":                       func(s *v1alpha1.SimNodeClassSpec) { s.BootDelay = &metav1.Duration{Duration: time.Minute} },
		"pools and reservations": func(s *v1alpha1.SimNodeClassSpec) {
			s.CapacityPools = []v1alpha1.CapacityPool{{Capacity: 1}}
			s.Reservations = []v1alpha1.Reservation{{ID: "r", InstanceType: "m5.large", Zone: "us-east-1a", Count: 1}}
		},
		"zones": func(s *v1alpha1.SimNodeClassSpec) { s.Zones = []string{"us-east-1a"} },
		"interruptions": func(s *v1alpha1.SimNodeClassSpec) {
			s.Interruptions.SpotInterruptionModel = v1alpha1.SpotInterruptionAdvisor
		},
	}
	for name, change := range same {
		nc := base()
		change(&nc.Spec)
		if nc.Hash() != h {
			t.Errorf("%s changed the hash", name)
		}
	}
	forty := resource.MustParse("40Gi")
	differ := map[string]func(*v1alpha1.SimNodeClassSpec){
		"root volume": func(s *v1alpha1.SimNodeClassSpec) { s.RootVolumeSize = &forty },
		"a label":     func(s *v1alpha1.SimNodeClassSpec) { s.Labels["c"] = "3" },
		"a tag value": func(s *v1alpha1.SimNodeClassSpec) { s.Tags["owner"] = "you" },
		"no tags":     func(s *v1alpha1.SimNodeClassSpec) { s.Tags = nil },
	}
	for name, change := range differ {
		nc := base()
		change(&nc.Spec)
		if nc.Hash() == h {
			t.Errorf("%s left the hash unchanged", name)
		}
	}
	empty := &v1alpha1.SimNodeClass{Spec: v1alpha1.SimNodeClassSpec{Labels: map[string]string{}}}
	if empty.Hash() != (&v1alpha1.SimNodeClass{}).Hash() {
		t.Error("an empty label map hashes unlike an absent one")
	}
}

func TestGetters(t *testing.T) {
	var s v1alpha1.SimNodeClassSpec
	if s.GetRegion() != "us-east-1" || s.GetBootDelay() != 2*time.Second || s.GetRegistrationDelay() != time.Second ||
		s.GetDevicePluginDelay() != 3*time.Second || s.GetShutdownDelay() != 0 || s.GetRootVolumeSize() != 20<<30 {
		t.Errorf("defaults of an empty spec are wrong")
	}
	in := &s.Interruptions
	if in.GetSpotInterruptionModel() != v1alpha1.SpotInterruptionNone || in.GetScalePercent() != 100 ||
		in.GetRebalanceLead() != 5*time.Minute || in.GetMaintenanceInterval() != 0 || in.GetMaintenanceNotice() != 10*time.Minute {
		t.Errorf("interruption defaults are wrong")
	}
	zero := int32(0)
	s = v1alpha1.SimNodeClassSpec{Region: "us-west-2", BootDelay: &metav1.Duration{}, Interruptions: v1alpha1.Interruptions{ScalePercent: &zero}}
	if s.GetRegion() != "us-west-2" || s.GetBootDelay() != 0 || s.Interruptions.GetScalePercent() != 0 {
		t.Errorf("set values are not returned")
	}
}
