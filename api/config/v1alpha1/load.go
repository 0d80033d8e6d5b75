/*
Copyright 2026 The browserfleet Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// codecs decode the Configuration strictly: an unknown or duplicate field
// is an error, so that a misspelt setting never falls back to its default
// unnoticed.
var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		panic(err) // the types of this package
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
}()

// Load reads the Configuration file at path (YAML or JSON), defaults it
// and validates it. Errors name the file, and the field at fault.
func Load(path string) (*Configuration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", path, err)
	}
	return cfg, nil
}

// Decode reads a Configuration (YAML or JSON), defaults it and validates
// it. It must say its apiVersion and kind.
func Decode(data []byte) (*Configuration, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, err
	}
	if errs := validateTypeMeta(tm); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	cfg := &Configuration{}
	if _, _, err := codecs.UniversalDecoder(GroupVersion).Decode(data, nil, cfg); err != nil {
		if runtime.IsStrictDecodingError(err) {
			return nil, err // it names the field
		}
		return nil, locate(data, err)
	}
	if errs := Validate(cfg); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return cfg, nil
}

func validateTypeMeta(tm metav1.TypeMeta) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, got, want string }{
		{"apiVersion", tm.APIVersion, GroupVersion.String()},
		{"kind", tm.Kind, "Configuration"},
	} {
		switch f.got {
		case f.want:
		case "":
			errs = append(errs, field.Required(field.NewPath(f.name), "must be "+f.want))
		default:
			errs = append(errs, field.NotSupported(field.NewPath(f.name), f.got, []string{f.want}))
		}
	}
	return errs
}

// locate finds the field whose value the decoder could not read (a
// duration or quantity that does not parse, a string for a number), for
// its error names none. It decodes each value of the file on its own into
// the type of its field; err is returned as it is when none fails alone.
func locate(data []byte, err error) error {
	raw, jerr := yaml.YAMLToJSON(data)
	if jerr != nil {
		return err
	}
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return err
	}
	if ferr := locateIn(reflect.TypeFor[Configuration](), doc, nil); ferr != nil {
		return ferr
	}
	return err
}

func locateIn(t reflect.Type, v any, p *field.Path) *field.Error {
	if v == nil {
		return nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return decodeAlone(t, v, p)
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return decodeAlone(t, v, p)
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			var err *field.Error
			if name == "" && strings.Contains(opts, "inline") {
				err = locateIn(f.Type, m, p)
			} else if fv, ok := m[name]; ok {
				err = locateIn(f.Type, fv, childPath(p, name))
			}
			if err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		items, ok := v.([]any)
		if !ok {
			return decodeAlone(t, v, p)
		}
		for i, item := range items {
			if err := locateIn(t.Elem(), item, p.Index(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return decodeAlone(t, v, p)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := locateIn(t.Elem(), m[k], p.Key(k)); err != nil {
				return err
			}
		}
		return nil
	}
	return decodeAlone(t, v, p)
}

// decodeAlone decodes one value into its field's type.
func decodeAlone(t reflect.Type, v any, p *field.Path) *field.Error {
	b, err := json.Marshal(v)
	if err != nil {
		// v came out of a JSON document; it always encodes.
		return field.InternalError(p, err)
	}
	err = json.Unmarshal(b, reflect.New(t).Interface())
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case t == reflect.TypeFor[metav1.Duration]():
		return field.Invalid(p, v, "must be a duration, e.g. 90s or 1h30m")
	case t == reflect.TypeFor[resource.Quantity]():
		return field.Invalid(p, v, "must be a quantity, e.g. 250m, 2 or 512Mi")
	case errors.As(err, &typeErr):
		return field.TypeInvalid(p, v, "must be of type "+typeName(t))
	}
	return field.Invalid(p, v, err.Error())
}

func childPath(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}

// typeName says what a field holds, in the file's terms.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice:
		return "list"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	}
	return t.Kind().String()
}
