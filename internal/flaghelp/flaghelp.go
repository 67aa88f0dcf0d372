// Package flaghelp writes a command's help as the documentation does: its
// flags as --name, with the variable each one names in brackets or
// without, and a list of variables cut to those the command reads.
package flaghelp

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Print lists fs's flags as the documentation writes them, --name (the
// flag package accepts one dash or two, and prints one), each with its
// default when it has one. Without vars, the variable each flag names in
// brackets is left out: for a command that reads none of them.
func Print(out io.Writer, fs *flag.FlagSet, vars bool) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if !vars {
			usage = varInBrackets.ReplaceAllString(usage, "")
		}
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			if isString(f) {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		fmt.Fprintf(out, "%s\n    \t%s\n", line, usage)
	})
}

// isString reports whether f holds text, whose default is quoted; a
// number, a duration or a bool is not. A flag whose type cannot be told
// counts as text.
func isString(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return true
	}
	_, s := g.Get().(string)
	return s
}

// varInBrackets is the " (RECON_TZ)" a flag's usage ends with.
var varInBrackets = regexp.MustCompile(` \((RECON|REPAIR)_[A-Z_]+\)`)

// Without is the help's list of variables vars less the entries whose
// name starts with one of prefixes: an entry is a line that starts with a
// variable's name after two spaces, and the more indented lines after it.
func Without(vars string, prefixes []string) string {
	var b strings.Builder
	skip := false
	for _, line := range strings.SplitAfter(vars, "\n") {
		if entry, ok := strings.CutPrefix(line, "  "); ok && entry != "" && entry[0] != ' ' {
			skip = slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(entry, p) })
		}
		if !skip {
			b.WriteString(line)
		}
	}
	return b.String()
}
