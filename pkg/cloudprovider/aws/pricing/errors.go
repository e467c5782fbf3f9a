package pricing

import (
	"context"
	"errors"
	"net"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// IsUnreachable reports whether err means the AWS API could not be reached or could not
// serve: no response at all (connection refused, DNS, TLS, a dropped connection), a server
// error (HTTP 5xx) or throttling the SDK's retries did not get past. Errors the service
// answered on purpose (AccessDenied, UnauthorizedOperation, InvalidParameterValue, ...) and the
// caller's own cancellation are not: they must reach the caller.
func IsUnreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var se *smithyhttp.RequestSendError
	var ne net.Error
	if errors.As(err, &se) || errors.As(err, &ne) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "RequestLimitExceeded", "Throttling", "ThrottlingException", "RequestThrottled", "ServiceUnavailable", "Unavailable", "InternalError", "InternalFailure", "InternalServerError":
			return true
		}
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() >= 500
}
