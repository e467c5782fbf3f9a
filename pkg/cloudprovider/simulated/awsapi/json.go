package awsapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tenon-sh/tenon/pkg/catalog"
)

// jsonHandler serves one operation of a JSON-protocol service; it takes the request body and
// the request (for its context and host) and returns the response document.
type jsonHandler func(op string, body []byte, r *http.Request) (any, *apiError)

func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request, service, op, version string, h jsonHandler) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSONError(w, version, badRequest("SerializationException", "reading the body: %v", err))
		return
	}
	w.Header().Set("x-amzn-RequestId", s.requestID())
	e, lost := s.fault(r.Context(), service, op)
	if e != nil {
		writeJSONError(w, version, e)
		return
	}
	resp, e := h(op, body, r)
	if lost != nil {
		writeJSONError(w, version, lost)
		return
	}
	if e != nil {
		writeJSONError(w, version, e)
		return
	}
	b, jerr := json.Marshal(resp)
	if jerr != nil {
		writeJSONError(w, version, &apiError{Status: http.StatusInternalServerError, Code: "InternalFailure", Message: jerr.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-"+version)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func writeJSONError(w http.ResponseWriter, version string, e *apiError) {
	status := e.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	b, _ := json.Marshal(map[string]string{"__type": e.Code, "message": e.Message})
	w.Header().Set("Content-Type", "application/x-amz-json-"+version)
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func decodeJSON(body []byte, v any) *apiError {
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("SerializationException", "%v", err)
	}
	return nil
}

// --- SSM ---

type ssmParameter struct {
	Name             string  `json:"Name"`
	Type             string  `json:"Type"`
	Value            string  `json:"Value"`
	Version          int     `json:"Version"`
	LastModifiedDate float64 `json:"LastModifiedDate"`
	ARN              string  `json:"ARN"`
	DataType         string  `json:"DataType"`
}

func (s *Server) ssm(op string, body []byte, _ *http.Request) (any, *apiError) {
	switch op {
	case "GetParameter":
		var in struct{ Name string }
		if err := decodeJSON(body, &in); err != nil {
			return nil, err
		}
		p, ok := s.parameter(in.Name)
		if !ok {
			return nil, badRequest("ParameterNotFound", "Parameter %s not found.", in.Name)
		}
		return map[string]any{"Parameter": p}, nil
	case "GetParameters":
		var in struct{ Names []string }
		if err := decodeJSON(body, &in); err != nil {
			return nil, err
		}
		if len(in.Names) == 0 || len(in.Names) > 10 {
			return nil, badRequest("ValidationException", "1 validation error detected: Value at 'names' failed to satisfy constraint: Member must have length between 1 and 10")
		}
		params, invalid := []ssmParameter{}, []string{}
		for _, n := range in.Names {
			if p, ok := s.parameter(n); ok {
				params = append(params, p)
			} else {
				invalid = append(invalid, n)
			}
		}
		return map[string]any{"Parameters": params, "InvalidParameters": invalid}, nil
	}
	return nil, badRequest("UnknownOperationException", "AmazonSSM.%s is not served by this endpoint", op)
}

func (s *Server) parameter(name string) (ssmParameter, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.params[name]
	if !ok {
		return ssmParameter{}, false
	}
	var created float64
	if img := s.image(id); img != nil {
		created = float64(img.Created.Unix())
	}
	return ssmParameter{
		Name: name, Type: "String", Value: id, Version: 1, LastModifiedDate: created,
		ARN: "arn:aws:ssm:" + s.region + "::parameter" + name, DataType: "aws:ec2:image",
	}, true
}

// --- Pricing ---

type pricingFilter struct {
	Field string `json:"Field"`
	Type  string `json:"Type"`
	Value string `json:"Value"`
}

// regionLocations names the catalog's regions as the price list's location attribute does.
var regionLocations = map[string]string{
	"us-east-1": "US East (N. Virginia)",
	"us-west-2": "US West (Oregon)",
}

func (s *Server) pricing(op string, body []byte, _ *http.Request) (any, *apiError) {
	if op != "GetProducts" {
		return nil, badRequest("UnknownOperationException", "AWSPriceListService.%s is not served by this endpoint", op)
	}
	var in struct {
		ServiceCode   string
		Filters       []pricingFilter
		FormatVersion string
		NextToken     string
		MaxResults    int
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if in.ServiceCode != "AmazonEC2" {
		return nil, badRequest("InvalidParameterException", "Service code %q is not served by this endpoint; only AmazonEC2", in.ServiceCode)
	}
	if in.FormatVersion != "" && in.FormatVersion != "aws_v1" {
		return nil, badRequest("InvalidParameterException", "Format version %q is not supported", in.FormatVersion)
	}
	for _, f := range in.Filters {
		if f.Type != "" && f.Type != "TERM_MATCH" {
			return nil, badRequest("InvalidParameterException", "Filter type %q is not supported", f.Type)
		}
	}
	docs := s.priceDocOverrides()
	var all []string
	for _, pe := range s.prices {
		if matchPricing(in.Filters, pe.family, pe.attrs) {
			if d, ok := docs[pe.attrs["instanceType"]]; ok {
				all = append(all, d)
				continue
			}
			all = append(all, pe.doc)
		}
	}
	start := 0
	if in.NextToken != "" {
		n, err := parseToken(in.NextToken)
		if err != nil {
			return nil, &apiError{Status: http.StatusBadRequest, Code: "InvalidNextTokenException", Message: err.Message}
		}
		start = min(n, len(all))
	}
	limit := in.MaxResults
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	end := min(start+limit, len(all))
	out := map[string]any{"FormatVersion": "aws_v1", "PriceList": all[start:end]}
	if end < len(all) {
		out["NextToken"] = makeToken(end)
	}
	return out, nil
}

// priceEntry is one product of the price list, its attributes and its document.
type priceEntry struct {
	family string
	attrs  map[string]string
	doc    string
}

// priceEntries builds the price list of a catalog's on-demand prices.
func priceEntries(region string, cat *catalog.Catalog) []priceEntry {
	location := regionLocations[region]
	var out []priceEntry
	for _, it := range cat.Types {
		price, ok := it.OnDemandPrice()
		if !ok {
			continue
		}
		attrs := map[string]string{
			"instanceType": it.Name, "regionCode": region, "location": location, "locationType": "AWS Region",
			"operatingSystem": "Linux", "preInstalledSw": "NA", "tenancy": "Shared", "capacitystatus": "Used",
			"licenseModel": "No License required", "servicecode": "AmazonEC2", "operation": "RunInstances",
			"usagetype": usageType(region, it.Name), "vcpu": strconv.Itoa(it.Shape.VCPU),
			"memory": memoryString(it.Shape.MemoryMiB), "instanceFamily": familyName(it.Shape.Category),
			"marketoption": "OnDemand", "currentGeneration": "Yes",
		}
		family := "Compute Instance"
		if it.Shape.BareMetal {
			family, attrs["tenancy"] = "Compute Instance (bare metal)", "Dedicated"
		}
		if it.Shape.GPUCount > 0 {
			attrs["gpu"] = strconv.Itoa(it.Shape.GPUCount)
		}
		out = append(out, priceEntry{family: family, attrs: attrs, doc: priceDocument(it.Name, family, attrs, price)})
	}
	return out
}

func matchPricing(filters []pricingFilter, family string, attrs map[string]string) bool {
	for _, f := range filters {
		switch f.Field {
		case "ServiceCode", "serviceCode", "servicecode":
			if f.Value != "AmazonEC2" {
				return false
			}
			continue
		case "productFamily":
			if f.Value != family {
				return false
			}
			continue
		}
		v, ok := attrs[f.Field]
		if !ok {
			// Unknown attributes match nothing, as the price list has no such product.
			return false
		}
		if !strings.EqualFold(v, f.Value) {
			return false
		}
	}
	return true
}

// priceDocument is one product of the price list as GetProducts returns it: a JSON document in
// a string, with the on-demand price under terms.OnDemand.<offer>.priceDimensions.<dim>.
func priceDocument(name, family string, attrs map[string]string, price float64) string {
	sku := strings.ToUpper(resourceID("sku", name)[5:])
	offer := sku + ".JRTCKXETXF"
	dim := offer + ".6YS6EN2CT7"
	doc := map[string]any{
		"product": map[string]any{
			"productFamily": family,
			"attributes":    attrs,
			"sku":           sku,
		},
		"serviceCode": "AmazonEC2",
		"terms": map[string]any{
			"OnDemand": map[string]any{
				offer: map[string]any{
					"priceDimensions": map[string]any{
						dim: map[string]any{
							"unit":         "Hrs",
							"endRange":     "Inf",
							"description":  fmt.Sprintf("$%s per On Demand Linux %s Instance Hour", strconv.FormatFloat(price, 'f', -1, 64), name),
							"appliesTo":    []string{},
							"rateCode":     dim,
							"beginRange":   "0",
							"pricePerUnit": map[string]string{"USD": strconv.FormatFloat(price, 'f', 10, 64)},
						},
					},
					"sku":            sku,
					"effectiveDate":  "2026-11-01T00:00:00Z",
					"offerTermCode":  "JRTCKXETXF",
					"termAttributes": map[string]string{},
				},
			},
		},
		"version":         "20261101000000",
		"publicationDate": "2026-11-01T00:00:00Z",
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

func usageType(region, name string) string {
	prefix := map[string]string{"us-east-1": "", "us-west-2": "USW2-"}[region]
	return prefix + "BoxUsage:" + name
}

func memoryString(mib int64) string {
	gib := float64(mib) / 1024
	return strconv.FormatFloat(gib, 'f', -1, 64) + " GiB"
}

func familyName(category string) string {
	switch {
	case slices.Contains([]string{"c"}, category):
		return "Compute optimized"
	case slices.Contains([]string{"r", "x", "z", "u"}, category):
		return "Memory optimized"
	case slices.Contains([]string{"i", "d", "h"}, category):
		return "Storage optimized"
	case slices.Contains([]string{"p", "g", "inf", "trn", "dl", "f", "vt"}, category):
		return "GPU instance"
	}
	return "General purpose"
}
