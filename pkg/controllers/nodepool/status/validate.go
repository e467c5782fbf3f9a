package status

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	apisv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/validation"
	"github.com/tenon-sh/tenon/pkg/catalog"
	"github.com/tenon-sh/tenon/pkg/scheduling"
)

// Validate returns why the NodePool cannot be used, or nil. It checks the NodePool against
// the embedded CRD schema (a NodePool stored under an older schema may no longer pass it), and
// what the schema cannot check: each template requirement compiles, together they can be
// satisfied, each disruption budget's schedule parses, and a MIG layout label names one tenon
// models.
func Validate(np *apisv1.NodePool, now time.Time) error {
	var errs []error
	// Validate as created: only what the user wrote, not the server's bookkeeping.
	stripped := &apisv1.NodePool{Spec: np.Spec}
	stripped.Name, stripped.Labels, stripped.Annotations = np.Name, np.Labels, np.Annotations
	for _, e := range validation.Validate(runtime.Object(stripped), nil) {
		errs = append(errs, e)
	}
	reqs := make([]scheduling.Requirement, 0, len(np.Spec.Template.Spec.Requirements))
	for i, r := range np.Spec.Template.Spec.Requirements {
		req, err := scheduling.NewRequirement(scheduling.NormalizeKey(r.Key), r.Operator, r.Values...)
		if err != nil {
			errs = append(errs, fmt.Errorf("spec.template.spec.requirements[%d]: %w", i, err))
			continue
		}
		reqs = append(reqs, req)
	}
	for _, r := range scheduling.NewRequirements(reqs...).Items() {
		if r.IsEmpty() {
			errs = append(errs, fmt.Errorf("spec.template.spec.requirements: the requirements on %s allow no value", r.Key))
		}
	}
	if _, err := catalog.ParseMIGConfig(np.Spec.Template.Labels[catalog.LabelMIGConfig]); err != nil {
		errs = append(errs, fmt.Errorf("spec.template.metadata.labels: %w", err))
	}
	for i := range np.Spec.Disruption.Budgets {
		if _, err := np.Spec.Disruption.Budgets[i].IsActive(now); err != nil {
			errs = append(errs, fmt.Errorf("spec.disruption.budgets[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}
