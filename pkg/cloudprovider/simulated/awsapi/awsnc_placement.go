package awsapi

import (
	"fmt"
	"slices"
)

// PlacementGroup is an EC2 placement group the endpoint serves to DescribePlacementGroups.
type PlacementGroup struct {
	// Name is the group's name. Required.
	Name string
	// ID is its ID (default derived from Name).
	ID string
	// Strategy is cluster (default), partition or spread.
	Strategy string
	// State is available (default), pending, deleting or deleted.
	State string
}

func init() { ec2Handlers["DescribePlacementGroups"] = (*Server).describePlacementGroups }

// AddPlacementGroup adds a placement group (replacing one of the same name).
func (s *Server) AddPlacementGroup(pg PlacementGroup) error {
	if pg.Name == "" {
		return fmt.Errorf("awsapi: AddPlacementGroup: the group needs a name")
	}
	if pg.ID == "" {
		pg.ID = resourceID("pg", pg.Name)
	}
	if pg.Strategy == "" {
		pg.Strategy = "cluster"
	}
	if pg.State == "" {
		pg.State = "available"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.placementGroups = slices.DeleteFunc(s.placementGroups, func(x PlacementGroup) bool { return x.Name == pg.Name })
	s.placementGroups = append(s.placementGroups, pg)
	return nil
}

type placementGroupXML struct {
	GroupName string `xml:"groupName"`
	GroupID   string `xml:"groupId"`
	GroupArn  string `xml:"groupArn"`
	Strategy  string `xml:"strategy"`
	State     string `xml:"state"`
}

type describePlacementGroupsResponse struct {
	XMLName struct{} `xml:"DescribePlacementGroupsResponse"`
	ec2Header
	Groups []placementGroupXML `xml:"placementGroupSet>item"`
}

// describePlacementGroups serves DescribePlacementGroups by GroupName or GroupId (a name or
// ID that does not exist is an error, as in EC2) and the filters group-name, group-id,
// strategy and state.
func (s *Server) describePlacementGroups(f form) (ec2Response, *apiError) {
	names, ids, filters := f.strs("GroupName"), f.strs("GroupId"), parseFilters(f)
	for _, n := range names {
		if !slices.ContainsFunc(s.placementGroups, func(pg PlacementGroup) bool { return pg.Name == n }) {
			return nil, badRequest("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", n)
		}
	}
	for _, id := range ids {
		if !slices.ContainsFunc(s.placementGroups, func(pg PlacementGroup) bool { return pg.ID == id }) {
			return nil, badRequest("InvalidPlacementGroupId.NotFound", "The Placement Group ID '%s' does not exist.", id)
		}
	}
	resp := &describePlacementGroupsResponse{Groups: []placementGroupXML{}}
	for _, pg := range s.placementGroups {
		if (len(names) > 0 && !contains(names, pg.Name)) || (len(ids) > 0 && !contains(ids, pg.ID)) {
			continue
		}
		x := placementGroupXML{GroupName: pg.Name, GroupID: pg.ID, Strategy: pg.Strategy, State: pg.State,
			GroupArn: "arn:aws:ec2:" + s.region + ":" + s.opts.Account + ":placement-group/" + pg.Name}
		ok, err := matchFilters(filters, nil, func(name string) ([]string, bool) {
			switch name {
			case "group-name":
				return []string{x.GroupName}, true
			case "group-id":
				return []string{x.GroupID}, true
			case "strategy":
				return []string{x.Strategy}, true
			case "state":
				return []string{x.State}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			resp.Groups = append(resp.Groups, x)
		}
	}
	return resp, nil
}
