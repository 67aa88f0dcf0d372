// Package envload fills a configuration struct from the environment with
// go-envconfig: a secret may come from a mounted file (NAME_FILE), and an
// error names the variable, quotes its value and shows a good one.
package envload

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/secret"
)

// Load fills target, a pointer to a struct with env tags, from env. Each
// variable in secretVars may instead be read from the file NAME_FILE
// names (secret.Files).
func Load(ctx context.Context, env envconfig.Lookuper, target any, secretVars []string) error {
	files, err := secret.Files(env.Lookup, secretVars)
	if err != nil {
		return err
	}
	err = envconfig.ProcessWith(ctx, &envconfig.Config{
		Target: target,
		// The files come first: a NAME set to "" must not hide NAME_FILE.
		Lookuper: envconfig.MultiLookuper(envconfig.MapLookuper(files), env),
	})
	if err != nil {
		return explain(err, reflect.TypeOf(target).Elem(), env)
	}
	return nil
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
// set the variable aside and load the rest, so that every bad variable is
// reported at once.
type VarError struct {
	Name string // the variable, as the environment spells it
	msg  string
}

func (e *VarError) Error() string { return e.msg }
