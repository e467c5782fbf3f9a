package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	tenonv1alpha1 "github.com/tenon-sh/tenon/pkg/apis/tenon/v1alpha1"
	karpv1 "github.com/tenon-sh/tenon/pkg/apis/v1"
	"github.com/tenon-sh/tenon/pkg/apis/validation"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// loader accumulates the objects and errors of the files read.
type loader struct {
	set  *Set
	errs ErrorList
	seen map[objectKey]Source
}

type objectKey struct {
	gk              schema.GroupKind
	namespace, name string
}

func newLoader() *loader {
	return &loader{set: &Set{}, seen: map[objectKey]Source{}}
}

// place is where an object is: its source, the lines of its document, and the path of the
// object within the document ("items[2]." for an item of a List).
type place struct {
	src    Source
	lines  *lineIndex
	prefix string
	obj    map[string]interface{}
}

// fail records an error about the object at p, at the line of the field it names if found.
func (l *loader) fail(p place, err error) {
	kind, _ := p.obj["kind"].(string)
	md, _ := p.obj["metadata"].(map[string]interface{})
	namespace, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	e := &Error{Source: p.src, Kind: kind, Namespace: namespace, Name: name, Err: err}
	if fe, ok := err.(*field.Error); ok {
		e.Err = fieldError{fe}
	}
	if path := errorPath(err); path != "" {
		if n := p.lines.line(p.prefix + path); n > 0 {
			e.Line = n
		}
	}
	l.errs = append(l.errs, e)
}

func (l *loader) failAll(p place, errs field.ErrorList) {
	for _, err := range errs {
		l.fail(p, err)
	}
}

// fieldError is a field error without the noise of one that names no field.
type fieldError struct{ err *field.Error }

func (e fieldError) Error() string { return fieldMessage(e.err) }
func (e fieldError) Unwrap() error { return e.err }

// object decodes one object, or the items of a List.
func (l *loader) object(p place, inList bool) {
	apiVersion, kind, ok := l.typeMeta(p)
	if !ok {
		return
	}
	if _, hasItems := p.obj["items"]; kind == "List" || strings.HasSuffix(kind, "List") && hasItems {
		l.list(p, apiVersion, kind, inList)
		return
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		l.fail(p, field.Invalid(field.NewPath("apiVersion"), apiVersion, err.Error()))
		return
	}
	gvk := gv.WithKind(kind)
	if k, ok := kinds[gvk]; ok {
		l.typed(p, gvk, k)
		return
	}
	v, err := validation.For(gvk)
	switch {
	case err == nil:
		l.custom(p, gvk, v)
		return
	case !errors.Is(err, validation.ErrNoCRD):
		l.fail(p, err)
		return
	}
	if _, crdErr := validation.ForGroupKind(gvk.GroupKind()); crdErr == nil || knownGroupKind(gvk.GroupKind()) {
		l.fail(p, fmt.Errorf("no matches for kind %q in version %q", kind, apiVersion))
		return
	}
	if err := checkReadKind(gvk, apiVersion); err != nil {
		l.fail(p, err)
		return
	}
	l.add(p, gvk.GroupKind(), &unstructured.Unstructured{Object: p.obj})
}

// typeMeta returns the object's apiVersion and kind, or records why it cannot.
func (l *loader) typeMeta(p place) (apiVersion, kind string, ok bool) {
	for _, f := range []struct {
		name string
		dst  *string
	}{{"kind", &kind}, {"apiVersion", &apiVersion}} {
		switch v := p.obj[f.name].(type) {
		case string:
			*f.dst = v
		case nil:
		default:
			l.fail(p, field.Invalid(field.NewPath(f.name), v, "must be a string"))
			return "", "", false
		}
		if *f.dst == "" {
			l.fail(p, fmt.Errorf("%s not set", f.name))
			return "", "", false
		}
	}
	return apiVersion, kind, true
}

// list decodes the items of a List. Items of a typed list (DeploymentList) may leave out
// their apiVersion and kind.
func (l *loader) list(p place, apiVersion, kind string, inList bool) {
	if inList {
		l.fail(p, errors.New("a List may not contain another List"))
		return
	}
	raw := p.obj["items"]
	items, ok := raw.([]interface{})
	if !ok && raw != nil {
		l.fail(p, field.Invalid(field.NewPath("items"), jsonType(raw), "must be a list"))
		return
	}
	for i, item := range items {
		ip := p
		ip.src.Item = i + 1
		ip.prefix = fmt.Sprintf("%sitems[%d].", p.prefix, i)
		if n := p.lines.line(ip.prefix); n > 0 {
			ip.src.Line = n
		}
		m, ok := item.(map[string]interface{})
		if !ok {
			ip.obj = map[string]interface{}{}
			l.fail(ip, fmt.Errorf("a List item must be an object, not %s", jsonType(item)))
			continue
		}
		if kind != "List" {
			if _, ok := m["apiVersion"]; !ok {
				m["apiVersion"] = apiVersion
			}
			if _, ok := m["kind"]; !ok {
				m["kind"] = strings.TrimSuffix(kind, "List")
			}
		}
		ip.obj = m
		l.object(ip, true)
	}
}

// typed decodes an object of a modelled kind strictly and checks it.
func (l *loader) typed(p place, gvk schema.GroupVersionKind, k kind) {
	setNamespace(p.obj, k.namespaced)
	if errs := checkQuantities(p.obj, nil); len(errs) > 0 {
		l.failAll(p, errs)
		return
	}
	obj := k.new()
	if !l.decodeStrict(p, obj) {
		return
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		l.fail(p, err)
		return
	}
	fillName(p, accessor)
	errs := apivalidation.ValidateObjectMetaAccessor(accessor, k.namespaced, k.name, field.NewPath("metadata"))
	if errs = append(errs, k.check(obj)...); len(errs) > 0 {
		l.failAll(p, errs)
		return
	}
	l.add(p, gvk.GroupKind(), obj)
}

// custom validates and defaults an object whose kind has an embedded CRD.
func (l *loader) custom(p place, gvk schema.GroupVersionKind, v *validation.Validator) {
	setNamespace(p.obj, v.Namespaced())
	if errs := v.Create(p.obj); len(errs) > 0 {
		l.failAll(p, errs)
		return
	}
	u := &unstructured.Unstructured{Object: p.obj}
	fillName(p, u)
	if errs := apivalidation.ValidateObjectMetaAccessor(u, v.Namespaced(), apivalidation.NameIsDNSSubdomain, field.NewPath("metadata")); len(errs) > 0 {
		l.failAll(p, errs)
		return
	}
	switch gvk {
	case nodePoolKind:
		np := &karpv1.NodePool{}
		if l.decodeStrict(p, np) {
			l.add(p, gvk.GroupKind(), np)
		}
	case commitmentKind:
		c := &tenonv1alpha1.Commitment{}
		if !l.decodeStrict(p, c) {
			return
		}
		if err := tenonv1alpha1.Validate(c); err != nil {
			l.failEach(p, err)
			return
		}
		l.add(p, gvk.GroupKind(), c)
	default:
		l.add(p, gvk.GroupKind(), u)
	}
}

// failEach records each error of an aggregate (such as the field errors of a Validate
// function, each then at its field's line), or err itself.
func (l *loader) failEach(p place, err error) {
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		l.fail(p, err)
		return
	}
	for _, e := range agg.Errors() {
		l.fail(p, e)
	}
}

// decodeStrict decodes the object into obj, refusing unknown and duplicate fields.
func (l *loader) decodeStrict(p place, obj runtime.Object) bool {
	b, err := json.Marshal(p.obj)
	if err != nil {
		l.fail(p, err)
		return false
	}
	strict, err := sigsjson.UnmarshalStrict(b, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		l.fail(p, err)
		return false
	}
	for _, err := range strict {
		l.fail(p, err)
	}
	return len(strict) == 0
}

// fillName completes a generateName as the API server does, with a suffix derived from the
// object's place in the manifests.
func fillName(p place, obj metav1.Object) {
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(generateName(obj.GetGenerateName(), p.src.String()))
		setName(p.obj, obj.GetName())
	}
}

// add gives an object without a uid one, as the API server would, refuses
// a second object of the same kind, namespace and name, and adds it to the Set.
func (l *loader) add(p place, gk schema.GroupKind, obj runtime.Object) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		l.fail(p, err)
		return
	}
	if accessor.GetName() != "" {
		key := objectKey{gk, accessor.GetNamespace(), accessor.GetName()}
		if first, dup := l.seen[key]; dup {
			l.fail(p, fmt.Errorf("%s is also defined at %s", objectID(gk.Kind, key.namespace, key.name), first))
			return
		}
		l.seen[key] = p.src
		if accessor.GetUID() == "" {
			accessor.SetUID(uidFor(gk.String(), key.namespace, key.name))
		}
	}
	before := l.set.podCount
	l.set.add(p.src, obj)
	if l.set.podCount > MaxPods && before <= MaxPods {
		l.fail(p, fmt.Errorf("the manifests expand to more than %d pods, the most Kubernetes supports in a cluster", MaxPods))
	}
}

// setNamespace defaults the namespace of a namespaced object to "default" and clears that of a
// cluster-scoped one, as the API server does.
func setNamespace(obj map[string]interface{}, namespaced bool) {
	md, ok := obj["metadata"].(map[string]interface{})
	if !ok {
		if obj["metadata"] != nil {
			return // a decoding error
		}
		md = map[string]interface{}{}
		obj["metadata"] = md
	}
	if !namespaced {
		delete(md, "namespace")
		return
	}
	if ns, present := md["namespace"]; !present || ns == nil || ns == "" {
		md["namespace"] = defaultNamespace
	}
}

func setName(obj map[string]interface{}, name string) {
	if md, ok := obj["metadata"].(map[string]interface{}); ok {
		md["name"] = name
	}
}

// quantityFields are the fields that hold a map of resource quantities.
// (A RuntimeClass's overhead holds podFixed, the map.)
var quantityFields = map[string]bool{"requests": true, "limits": true, "overhead": true, "podFixed": true, "capacity": true, "allocatable": true}

// checkQuantities finds the resource quantities that do not parse, so that the error names the
// field (decoding would report only the first, without its place).
func checkQuantities(v interface{}, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch v := v.(type) {
	case map[string]interface{}:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := path.Child(k)
			if path == nil {
				p = field.NewPath(k)
			}
			if list, ok := v[k].(map[string]interface{}); ok && quantityFields[k] && list["podFixed"] == nil {
				for _, name := range slices.Sorted(maps.Keys(list)) {
					if err := parseQuantity(list[name]); err != nil {
						errs = append(errs, field.Invalid(p.Key(name), list[name], err.Error()))
					}
				}
				continue
			}
			errs = append(errs, checkQuantities(v[k], p)...)
		}
	case []interface{}:
		for i, e := range v {
			errs = append(errs, checkQuantities(e, path.Index(i))...)
		}
	}
	return errs
}

func parseQuantity(v interface{}) error {
	var s string
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		s = v
	case int64:
		return nil
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return errors.New("must be a quantity, such as 500m or 2Gi")
	}
	_, err := resource.ParseQuantity(s)
	return err
}
