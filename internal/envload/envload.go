// Package envload fills a configuration struct from the environment with
// go-envconfig: a secret may come from a mounted file (NAME_FILE), and an
// error names the variable, quotes its value and shows a good one.
package envload

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/secret"
)

// Load fills target, a pointer to a struct with env tags, from env. Each
// variable in secretVars may instead be read from the file NAME_FILE
// names (secret.Files).
//
// Each variable is read and judged on its own: one that cannot be read (a
// value of the wrong type, a NAME_FILE that cannot be read, NAME and
// NAME_FILE both set) is left at its default, and the others are still
// read. The error then joins one *VarError per such variable, so that
// every bad variable is reported at once and none makes another look
// unset; Unread says which they are.
func Load(ctx context.Context, env envconfig.Lookuper, target any, secretVars []string) error {
	var errs []error
	aside := map[string]bool{}
	files := map[string]string{}
	for _, name := range secretVars {
		f, err := secret.Files(env.Lookup, []string{name})
		if err != nil {
			errs = append(errs, &VarError{Name: name, msg: err.Error()})
			aside[name] = true
			continue
		}
		maps.Copy(files, f)
	}
	// The files come first: a NAME set to "" must not hide NAME_FILE.
	lookup := masked{env: envconfig.MultiLookuper(envconfig.MapLookuper(files), env), names: aside}
	v := reflect.ValueOf(target).Elem()
	for {
		v.SetZero()
		err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: lookup})
		if err == nil {
			return joined(errs, aside)
		}
		err = explain(err, v.Type(), env)
		var ve *VarError
		if !errors.As(err, &ve) || aside[ve.Name] {
			// Not a variable's: nothing can be set aside. The defaults
			// stand, so that the caller's checks still have a config.
			v.SetZero()
			if derr := envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: envconfig.MapLookuper(nil)}); derr != nil {
				v.SetZero()
			}
			return joined(append(errs, err), aside)
		}
		errs = append(errs, err)
		aside[ve.Name] = true
	}
}

// Unread returns the variables err, from Load, says could not be read:
// set, but unusable. A check that a variable is set must not call these
// "not set": the error already says what is wrong with them.
func Unread(err error) map[string]bool {
	var le *loadError
	if errors.As(err, &le) {
		return maps.Clone(le.unread)
	}
	return map[string]bool{}
}

// loadError is Load's error: its errors joined as errors.Join joins them,
// with the variables Load set aside as unreadable, for Unread.
type loadError struct {
	errs   []error
	unread map[string]bool
}

// joined returns errs as one loadError, nil when there are none.
func joined(errs []error, unread map[string]bool) error {
	if len(errs) == 0 {
		return nil
	}
	return &loadError{errs: errs, unread: unread}
}

func (e *loadError) Error() string   { return errors.Join(e.errs...).Error() }
func (e *loadError) Unwrap() []error { return e.errs }

// masked is env without the variables in names.
type masked struct {
	env   envconfig.Lookuper
	names map[string]bool
}

func (m masked) Lookup(key string) (string, bool) {
	if m.names[key] {
		return "", false
	}
	return m.env.Lookup(key)
}

// explain rewrites go-envconfig's errors, which name the Go field of t and
// quote strconv, to say the variable, the value and what a good one looks
// like: RECON_DAYS="abc" is not a whole number (e.g. RECON_DAYS=7).
func explain(err error, t reflect.Type, env envconfig.Lookuper) error {
	msg := err.Error()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !strings.HasPrefix(msg, f.Name+":") {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		value, _ := env.Lookup(name)
		var want string
		switch {
		case f.Type == reflect.TypeOf(time.Duration(0)):
			want = fmt.Sprintf("a duration (e.g. %s=2h or %s=30m)", name, name)
		case f.Type.Kind() == reflect.Float64:
			want = fmt.Sprintf("a plain number, no %% sign (e.g. %s=0.5)", name)
		case f.Type.Kind() == reflect.Int, f.Type.Kind() == reflect.Int64:
			want = fmt.Sprintf("a whole number (e.g. %s=7)", name)
		case f.Type.Kind() == reflect.Bool:
			want = fmt.Sprintf("true or false (e.g. %s=true)", name)
		default:
			return &VarError{Name: name, msg: fmt.Sprintf("%s: %s", name, strings.TrimSpace(strings.TrimPrefix(msg, f.Name+":")))}
		}
		return &VarError{Name: name, msg: fmt.Sprintf("%s=%q is not %s", name, value, want)}
	}
	return err
}

// VarError is a variable whose value cannot be read. Name lets a caller
// tell which variable it is (Unread).
type VarError struct {
	Name string // the variable, as the environment spells it
	msg  string
}

func (e *VarError) Error() string { return e.msg }
