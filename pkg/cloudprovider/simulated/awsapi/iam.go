package awsapi

import (
	"encoding/xml"
	"net/http"
	"regexp"
	"time"
)

const (
	iamVersion = "2010-05-08"
	iamXMLNS   = "https://iam.amazonaws.com/doc/2010-05-08/"
)

// instanceProfile is an IAM instance profile: at most one role, as IAM allows.
type instanceProfile struct {
	name    string
	path    string
	id      string
	created time.Time
	roles   []string
	tags    []tag
}

type iamTagXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type iamRoleXML struct {
	Path                     string `xml:"Path"`
	RoleName                 string `xml:"RoleName"`
	RoleID                   string `xml:"RoleId"`
	Arn                      string `xml:"Arn"`
	CreateDate               string `xml:"CreateDate"`
	AssumeRolePolicyDocument string `xml:"AssumeRolePolicyDocument"`
}

type iamProfileXML struct {
	Path                string       `xml:"Path"`
	InstanceProfileName string       `xml:"InstanceProfileName"`
	InstanceProfileID   string       `xml:"InstanceProfileId"`
	Arn                 string       `xml:"Arn"`
	CreateDate          string       `xml:"CreateDate"`
	Roles               []iamRoleXML `xml:"Roles>member"`
	Tags                []iamTagXML  `xml:"Tags>member"`
}

type iamResult struct {
	XMLName         xml.Name
	InstanceProfile *iamProfileXML `xml:"InstanceProfile,omitempty"`
}

type iamEnvelope struct {
	XMLName   xml.Name
	Xmlns     string `xml:"xmlns,attr"`
	Result    iamResult
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

type iamErrorDoc struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

func writeIAMError(w http.ResponseWriter, reqID string, e *apiError) {
	doc := iamErrorDoc{Xmlns: iamXMLNS, RequestID: reqID}
	doc.Error.Type, doc.Error.Code, doc.Error.Message = "Sender", e.Code, e.Message
	if e.Status >= 500 {
		doc.Error.Type = "Receiver"
	}
	b, _ := xml.Marshal(doc)
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

func noSuchEntity(format string, args ...any) *apiError {
	e := badRequest("NoSuchEntity", format, args...)
	e.Status = http.StatusNotFound
	return e
}

func conflict(code, format string, args ...any) *apiError {
	e := badRequest(code, format, args...)
	e.Status = http.StatusConflict
	return e
}

var profileName = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)

func (s *Server) serveIAM(w http.ResponseWriter, r *http.Request, f form) {
	action := f.get("Action")
	reqID := s.requestID()
	e, lost := s.fault(r.Context(), svcIAM, action)
	if e != nil {
		writeIAMError(w, reqID, e)
		return
	}
	s.mu.Lock()
	profile, err := s.iam(action, f)
	s.mu.Unlock()
	if lost != nil {
		writeIAMError(w, reqID, lost)
		return
	}
	if err != nil {
		writeIAMError(w, reqID, err)
		return
	}
	env := iamEnvelope{XMLName: xml.Name{Local: action + "Response"}, Xmlns: iamXMLNS, RequestID: reqID}
	env.Result.XMLName = xml.Name{Local: action + "Result"}
	env.Result.InstanceProfile = profile
	writeXML(w, env)
}

// iam serves one IAM action with mu held; it returns the profile to answer with, if any.
func (s *Server) iam(action string, f form) (*iamProfileXML, *apiError) {
	name := f.get("InstanceProfileName")
	if !profileName.MatchString(name) {
		return nil, badRequest("ValidationError", "The specified value for instanceProfileName is invalid: %q", name)
	}
	p := s.profiles[name]
	switch action {
	case "CreateInstanceProfile":
		if p != nil {
			return nil, conflict("EntityAlreadyExists", "Instance Profile %s already exists.", name)
		}
		path := f.get("Path")
		if path == "" {
			path = "/"
		}
		p = &instanceProfile{name: name, path: path, id: "AIPA" + resourceID("x", name)[3:19], created: s.opts.Clock.Now(), tags: f.tags("Tags.member")}
		s.profiles[name] = p
		return s.profileXML(p), nil
	}
	if p == nil {
		return nil, noSuchEntity("Instance Profile %s cannot be found.", name)
	}
	switch action {
	case "GetInstanceProfile":
		return s.profileXML(p), nil
	case "AddRoleToInstanceProfile":
		role := f.get("RoleName")
		if role == "" {
			return nil, badRequest("ValidationError", "The request must contain the parameter RoleName")
		}
		if len(p.roles) > 0 {
			return nil, conflict("LimitExceeded", "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1")
		}
		p.roles = append(p.roles, role)
		return nil, nil
	case "RemoveRoleFromInstanceProfile":
		role := f.get("RoleName")
		if !contains(p.roles, role) {
			return nil, noSuchEntity("The role with name %s cannot be found in instance profile %s.", role, name)
		}
		p.roles = nil
		return nil, nil
	case "TagInstanceProfile":
		tags := f.tags("Tags.member")
		if len(tags) == 0 {
			return nil, badRequest("ValidationError", "The request must contain at least one tag")
		}
		p.tags = withTags(p.tags, tags)
		if len(p.tags) > 50 {
			return nil, conflict("LimitExceeded", "The number of tags has reached the maximum limit.")
		}
		return nil, nil
	case "DeleteInstanceProfile":
		if len(p.roles) > 0 {
			return nil, conflict("DeleteConflict", "Cannot delete entity, must remove roles from instance profile first.")
		}
		delete(s.profiles, name)
		return nil, nil
	}
	return nil, badRequest("InvalidAction", "The action %s is not valid for this web service.", action)
}

func (s *Server) profileXML(p *instanceProfile) *iamProfileXML {
	x := &iamProfileXML{
		Path: p.path, InstanceProfileName: p.name, InstanceProfileID: p.id,
		Arn: "arn:aws:iam::" + s.opts.Account + ":instance-profile" + p.path + p.name, CreateDate: isoTime(p.created),
		Roles: []iamRoleXML{}, Tags: []iamTagXML{},
	}
	for _, r := range p.roles {
		x.Roles = append(x.Roles, iamRoleXML{
			Path: "/", RoleName: r, RoleID: "AROA" + resourceID("r", r)[2:18], Arn: "arn:aws:iam::" + s.opts.Account + ":role/" + r,
			CreateDate: isoTime(p.created), AssumeRolePolicyDocument: `%7B%22Version%22%3A%222012-10-17%22%2C%22Statement%22%3A%5B%7B%22Effect%22%3A%22Allow%22%2C%22Principal%22%3A%7B%22Service%22%3A%22ec2.amazonaws.com%22%7D%2C%22Action%22%3A%22sts%3AAssumeRole%22%7D%5D%7D`,
		})
	}
	for _, t := range p.tags {
		x.Tags = append(x.Tags, iamTagXML(t))
	}
	return x
}
