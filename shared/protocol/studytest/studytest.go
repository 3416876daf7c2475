// Package studytest makes study values for tests: every single-field
// change of a study (Variants), found by reflection so that a field added
// to protocol.Study or to its embedded protocol.Settings is covered
// without editing a list.
package studytest

import (
	"fmt"
	"reflect"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Variant is a study that differs from a base study in one field.
type Variant struct {
	// Field is the Go path of the changed field ("Settings.ClipNorm",
	// "StudyStrategy.Lambda", "Helper.URL").
	Field string
	Study protocol.Study
}

// Variants returns, for every field of protocol.Study (walking into
// embedded and pointed-to structs), a deep copy of base with that field
// alone changed: a number raised, a string extended, a bool flipped, an
// element appended to a slice, a nil pointer set to a zero struct. Slices
// and pointers of base are never shared with a variant.
func Variants(base protocol.Study) []Variant {
	var out []Variant
	t := reflect.TypeFor[protocol.Study]()
	var walk func(path string, index []int, t reflect.Type)
	walk = func(path string, index []int, t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			idx := append(append([]int(nil), index...), i)
			ft := f.Type
			if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct && hasField(base, idx) {
				walk(p, idx, ft.Elem())
				continue
			}
			if ft.Kind() == reflect.Struct && ft.PkgPath() != "time" {
				walk(p, idx, ft)
				continue
			}
			s := Clone(base)
			change(fieldOf(reflect.ValueOf(&s).Elem(), idx), p)
			out = append(out, Variant{Field: p, Study: s})
		}
	}
	walk("", nil, t)
	return out
}

// hasField reports whether the pointer at idx in base is set (its fields
// are then changed one by one; a nil one is changed as a whole).
func hasField(base protocol.Study, idx []int) bool {
	v := reflect.ValueOf(&base).Elem()
	for _, i := range idx {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return false
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return !v.IsNil()
}

// fieldOf follows idx from v, through pointers.
func fieldOf(v reflect.Value, idx []int) reflect.Value {
	for _, i := range idx {
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v
}

func change(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float()*2 + 1)
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	default:
		panic(fmt.Sprintf("studytest: cannot change field %s of kind %s: teach change() about it", path, v.Kind()))
	}
}

// Clone returns a deep copy of s: no slice or pointer is shared.
func Clone(s protocol.Study) protocol.Study {
	return deep(reflect.ValueOf(s)).Interface().(protocol.Study)
}

func deep(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deep(v.Elem()))
		return p
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			s.Index(i).Set(deep(v.Index(i)))
		}
		return s
	case reflect.Struct:
		s := reflect.New(v.Type()).Elem()
		s.Set(v) // unexported fields (time.Time) come along as they are
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				s.Field(i).Set(deep(v.Field(i)))
			}
		}
		return s
	}
	return v
}
