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

package client

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/invopop/jsonschema"
)

// schemas caches the JSON Schema of each type Extract was called with.
var schemas sync.Map // reflect.Type -> schemaEntry

type schemaEntry struct {
	schema json.RawMessage
	err    error
}

// reflector derives Extract's schemas: every definition inline (the
// engine's strict mode takes no $ref indirection), no $schema or $id, the
// root the type itself; fields are required unless omitempty,
// additionalProperties false.
var reflector = &jsonschema.Reflector{
	DoNotReference: true,
	ExpandedStruct: true,
	Anonymous:      true,
}

// schemaOf is the JSON Schema of T. A T that holds itself (a tree) has no
// schema without references, and is refused.
func schemaOf[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	if e, ok := schemas.Load(t); ok {
		return e.(schemaEntry).schema, e.(schemaEntry).err
	}
	var e schemaEntry
	if cyc := cycleIn(t, map[reflect.Type]bool{}); cyc != nil {
		e.err = invalid("Extract[T]", "%s contains itself (through %s); Extract needs a type whose schema has no cycles", t, cyc)
	} else {
		s := reflector.ReflectFromType(t)
		s.Version = ""
		raw, err := json.Marshal(s)
		if err != nil {
			e.err = fmt.Errorf("deriving the JSON Schema of %s: %w", t, err)
		} else {
			e.schema = raw
		}
	}
	schemas.Store(t, e)
	return e.schema, e.err
}

// cycleIn returns a type that contains itself among the types t reaches
// through fields, elements and pointers, or nil.
func cycleIn(t reflect.Type, path map[reflect.Type]bool) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return cycleIn(t.Elem(), path)
	case reflect.Struct:
	default:
		return nil
	}
	if path[t] {
		return t
	}
	path[t] = true
	defer delete(path, t)
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() || f.Anonymous {
			if c := cycleIn(f.Type, path); c != nil {
				return c
			}
		}
	}
	return nil
}
