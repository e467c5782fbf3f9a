package nodeclass

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
)

// Reasons of the conditions this controller sets False.
const (
	ReasonSubnetsNotFound         = "SubnetsNotFound"
	ReasonSecurityGroupsNotFound  = "SecurityGroupsNotFound"
	ReasonAMINotFound             = "AMINotFound"
	ReasonUnsupportedAlias        = "UnsupportedAlias"
	ReasonInstanceProfileNotFound = "InstanceProfileNotFound"
	ReasonRoleNotFound            = "RoleNotFound"
	ReasonPlacementGroupNotFound  = "PlacementGroupNotFound"
	// ReasonAWSError: AWS refused a call definitively (access denied, invalid parameter).
	ReasonAWSError = "AWSRequestFailed"
	// reasonDependenciesNotReady: ValidationSucceeded waits for the parts it needs.
	reasonDependenciesNotReady = "DependenciesNotReady"
	// ReasonNotReady: Ready is False because a dependent condition is.
	ReasonNotReady = "NotReady"
)

// resolution is one reconcile of one class: each part writes its status and condition, or
// records a transient error and leaves them alone.
type resolution struct {
	c         *Controller
	nc        *awsv1.EC2NodeClass
	now       time.Time
	requeue   time.Duration
	transient []error
}

func (r *resolution) set(condType string, status metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(&r.nc.Status.Conditions, metav1.Condition{
		Type: condType, Status: status, Reason: reason, Message: message,
		ObservedGeneration: r.nc.Generation, LastTransitionTime: metav1.NewTime(r.now),
	})
}

func (r *resolution) setTrue(condType string) { r.set(condType, metav1.ConditionTrue, condType, "") }

func (r *resolution) setFalse(condType, reason, format string, args ...any) {
	r.set(condType, metav1.ConditionFalse, reason, fmt.Sprintf(format, args...))
}

// failed handles an AWS error of a part: a transient one is kept for the requeue (the part's
// status and condition stay as they were), a definitive one sets the condition False. It
// returns true either way, for `if r.failed(...) { return }`.
func (r *resolution) failed(condType, what string, err error) bool {
	if transient(err) {
		r.transient = append(r.transient, fmt.Errorf("%s: %w", what, err))
		return true
	}
	r.setFalse(condType, ReasonAWSError, "%s: %s", what, errorText(err))
	return true
}

// validation sets ValidationSucceeded: False when spec.kubelet holds a value the kubelet
// would refuse; else from the parts a launch needs, False when one is False, Unknown while
// one is not known, True when all are.
func (r *resolution) validation() {
	if errs := kubeletErrors(r.nc.Spec.Kubelet); len(errs) > 0 {
		r.setFalse(awsv1.ConditionTypeValidationSucceeded, ReasonInvalidKubeletConfiguration, "%s", strings.Join(errs, "; "))
		return
	}
	var waiting, failed []string
	for _, t := range []string{awsv1.ConditionTypeAMIsReady, awsv1.ConditionTypeInstanceProfileReady, awsv1.ConditionTypeSecurityGroupsReady, awsv1.ConditionTypeSubnetsReady} {
		switch cond := apimeta.FindStatusCondition(r.nc.Status.Conditions, t); {
		case cond == nil || cond.Status == metav1.ConditionUnknown:
			waiting = append(waiting, t)
		case cond.Status == metav1.ConditionFalse:
			failed = append(failed, t)
		}
	}
	switch {
	case len(failed) > 0:
		r.setFalse(awsv1.ConditionTypeValidationSucceeded, reasonDependenciesNotReady, "not validated: %s not ready", strings.Join(failed, ", "))
	case len(waiting) > 0:
		r.set(awsv1.ConditionTypeValidationSucceeded, metav1.ConditionUnknown, reasonDependenciesNotReady, "awaiting "+strings.Join(waiting, ", "))
	default:
		r.setTrue(awsv1.ConditionTypeValidationSucceeded)
	}
}

// ready sets Ready: True when every dependent condition is True, False naming the False ones
// with their messages, Unknown otherwise.
func (r *resolution) ready() {
	var unknown, notReady []string
	for _, t := range awsv1.ReadyDependents {
		cond := apimeta.FindStatusCondition(r.nc.Status.Conditions, t)
		switch {
		case cond == nil || cond.Status == metav1.ConditionUnknown:
			unknown = append(unknown, t)
		case cond.Status == metav1.ConditionFalse:
			if cond.Reason == reasonDependenciesNotReady {
				continue // it only repeats the others
			}
			notReady = append(notReady, t+": "+cond.Message)
		}
	}
	switch {
	case len(notReady) > 0:
		r.set(awsv1.ConditionTypeReady, metav1.ConditionFalse, ReasonNotReady, strings.Join(notReady, "; "))
	case len(unknown) > 0:
		r.set(awsv1.ConditionTypeReady, metav1.ConditionUnknown, "AwaitingReconciliation", "awaiting "+strings.Join(unknown, ", "))
	default:
		r.setTrue(awsv1.ConditionTypeReady)
	}
}

// transient reports whether an AWS error may go away by itself: throttling, a server error,
// a timeout or a network failure. Errors the service answered with a client status are
// definitive.
func transient(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code := ae.ErrorCode()
		if _, ok := retry.DefaultThrottleErrorCodes[code]; ok {
			return true
		}
		if ae.ErrorFault() == smithy.FaultServer {
			return true
		}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		s := re.HTTPStatusCode()
		return s >= http.StatusInternalServerError || s == http.StatusTooManyRequests
	}
	return ae == nil
}

// errorText is an AWS error as a condition message: its code and message, without the SDK's
// operation and request-ID wrapping.
func errorText(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	return err.Error()
}

// errorCode is the code of an AWS error ("" when it has none).
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// terms formats selector terms for a condition message, as they read in the spec.
func terms(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
