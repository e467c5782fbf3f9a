package nodeclass

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/tenon-sh/tenon/pkg/apis/aws/v1"
)

// capacityBlockExpiry is how long before its end a capacity block counts as expiring: EC2
// reclaims its instances from then on, so no new ones are launched into it.
const capacityBlockExpiry = 40 * time.Minute

// capacityReservations resolves capacityReservationSelectorTerms into the active reservations
// they select. Selecting none is not a failure: reservations come and go, and a class without
// one launches on-demand and spot capacity.
func (r *resolution) capacityReservations(ctx context.Context) {
	const cond = awsv1.ConditionTypeCapacityReservationsReady
	found := map[string]ec2types.CapacityReservation{}
	for _, in := range reservationQueries(r.nc.Spec.CapacityReservationSelectorTerms) {
		for p := ec2.NewDescribeCapacityReservationsPaginator(r.c.opts.EC2, in); p.HasMorePages(); {
			out, err := p.NextPage(ctx)
			if err != nil {
				if strings.HasPrefix(errorCode(err), "InvalidCapacityReservationId.NotFound") {
					break // a reservation named by ID that is gone selects nothing
				}
				r.failed(cond, "DescribeCapacityReservations", err)
				return
			}
			for _, cr := range out.CapacityReservations {
				found[aws.ToString(cr.CapacityReservationId)] = cr
			}
		}
	}
	var list []awsv1.CapacityReservation
	for _, cr := range found {
		if v, ok := r.reservation(cr); ok {
			list = append(list, v)
		}
	}
	slices.SortFunc(list, func(a, b awsv1.CapacityReservation) int { return strings.Compare(a.ID, b.ID) })
	r.nc.Status.CapacityReservations = list
	r.setTrue(cond)
	// Come back when the first one ends, so that it leaves the status on time.
	for _, v := range list {
		if v.EndTime != nil {
			until := v.EndTime.Sub(r.now)
			if v.State == awsv1.CapacityReservationStateActive && v.ReservationType == awsv1.CapacityReservationTypeCapacityBlock {
				until -= capacityBlockExpiry
			}
			if until > 0 && until < r.requeue {
				r.requeue = until
			}
		}
	}
}

// reservationQueries are the DescribeCapacityReservations calls of the terms: by ID, or by
// owner, tags and match criteria; active reservations only.
func reservationQueries(ts []awsv1.CapacityReservationSelectorTerm) []*ec2.DescribeCapacityReservationsInput {
	var out []*ec2.DescribeCapacityReservationsInput
	for _, t := range ts {
		active := filter("state", string(ec2types.CapacityReservationStateActive))
		if t.ID != "" {
			out = append(out, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{t.ID}, Filters: []ec2types.Filter{active}})
			continue
		}
		filters := append([]ec2types.Filter{active}, tagFilters(t.Tags)...)
		if t.OwnerID != "" {
			filters = append(filters, filter("owner-id", t.OwnerID))
		}
		if t.InstanceMatchCriteria != "" {
			filters = append(filters, filter("instance-match-criteria", t.InstanceMatchCriteria))
		}
		out = append(out, &ec2.DescribeCapacityReservationsInput{Filters: filters, MaxResults: aws.Int32(1000)})
	}
	return out
}

// reservation converts one reservation; false for a match criterion or type tenon does not
// know (logged), which it leaves alone.
func (r *resolution) reservation(cr ec2types.CapacityReservation) (awsv1.CapacityReservation, bool) {
	id := aws.ToString(cr.CapacityReservationId)
	if cr.InstanceMatchCriteria != ec2types.InstanceMatchCriteriaOpen && cr.InstanceMatchCriteria != ec2types.InstanceMatchCriteriaTargeted {
		r.c.opts.Log.Info("ignoring a capacity reservation with an unknown instance match criterion", "ec2nodeclass", r.nc.Name, "capacityReservation", id, "criterion", cr.InstanceMatchCriteria)
		return awsv1.CapacityReservation{}, false
	}
	typ := awsv1.CapacityReservationTypeDefault
	switch cr.ReservationType {
	case "", ec2types.CapacityReservationTypeDefault:
	case ec2types.CapacityReservationTypeCapacityBlock:
		typ = awsv1.CapacityReservationTypeCapacityBlock
	default:
		r.c.opts.Log.Info("ignoring a capacity reservation of an unknown type", "ec2nodeclass", r.nc.Name, "capacityReservation", id, "type", cr.ReservationType)
		return awsv1.CapacityReservation{}, false
	}
	v := awsv1.CapacityReservation{
		ID: id, AvailabilityZone: aws.ToString(cr.AvailabilityZone), InstanceType: aws.ToString(cr.InstanceType),
		OwnerID: aws.ToString(cr.OwnerId), InstanceMatchCriteria: string(cr.InstanceMatchCriteria),
		ReservationType: typ, Interruptible: aws.ToBool(cr.Interruptible), State: awsv1.CapacityReservationStateActive,
	}
	if cr.EndDate != nil {
		end := metav1.NewTime(cr.EndDate.Truncate(time.Second)) // as the API server keeps it
		v.EndTime = &end
		if typ == awsv1.CapacityReservationTypeCapacityBlock && !r.now.Before(cr.EndDate.Add(-capacityBlockExpiry)) {
			v.State = awsv1.CapacityReservationStateExpiring
		}
	}
	return v, true
}
