package envload

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Placeholder is what the example manifests put where a value of the
// user's own belongs.
const Placeholder = "REPLACE_ME"

// Placeholders refuses any variable of config, a struct with env tags,
// still holding an example manifest's Placeholder
// (ELIDO_WORKSPACE_ID=REPLACE_ME, a DSN with the password REPLACE_ME): a
// run on it could only fail later, against Elido or the store, or write
// where nobody looks. The value of a variable in secretVars is not
// quoted.
func Placeholders(config any, secretVars []string) error {
	var errs []error
	v := reflect.ValueOf(config)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if name == "" || f.Type.Kind() != reflect.String {
			continue
		}
		if val := v.Field(i).String(); strings.Contains(strings.ToUpper(val), Placeholder) {
			what := fmt.Sprintf("%q", val)
			if slices.Contains(secretVars, name) {
				what = "a value"
			}
			errs = append(errs, fmt.Errorf("%s holds %s with the placeholder %s: put your own value there", name, what, Placeholder))
		}
	}
	return errors.Join(errs...)
}
