package main

import (
	"strings"
)

// repairFlag is run's --repair: a bool flag, so that --repair alone is
// true, which for one release also takes the old values print and apply
// (--repair=apply; joinRepairValue turns --repair apply into that). It
// records the value as given, in *v, and that a flag gave it, in *set.
type repairFlag struct {
	v   *string
	set *bool
}

func (f repairFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f repairFlag) Set(s string) error {
	*f.v, *f.set = s, true
	return nil
}

// IsBoolFlag lets --repair stand alone, as the flag package's bool flags do.
func (f repairFlag) IsBoolFlag() bool { return true }

// joinRepairValue turns the old spelling --repair print (or apply), a
// value after a space, into --repair=print: a bool flag takes its value
// only after "=", and the flag package would stop at "print" as an operand.
func joinRepairValue(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--repair" || a == "-repair") && i+1 < len(args) && isOldRepairValue(args[i+1]) {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

func isOldRepairValue(s string) bool {
	s = strings.ToLower(s)
	return s == "print" || s == "apply"
}
