package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clickrecon/clickrecon/job"
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

// runRepair reads run's --repair and --apply (RECON_REPAIR, REPAIR_APPLY):
// the one place they become the job's mode: plan the repair of the settled
// missing days the run finds (RepairPrint), and insert the clicks it plans
// too (RepairApply). An old spelling (print or apply) still works, with a
// warning that says the new one. --apply alone is refused: it would write
// a repair that nothing plans.
func (c config) runRepair() (mode job.RepairMode, warning string, err error) {
	var on, apply bool
	given := c.Repair
	name := "RECON_REPAIR=" + given
	if c.RepairFlagSet {
		name = "--repair " + given
	}
	switch v := strings.ToLower(strings.TrimSpace(given)); v {
	case "":
	case "print", "apply":
		on, apply = true, v == "apply"
		warning = fmt.Sprintf("%s is the old spelling and goes in the next release: write %s", name, newRepairSpelling(c.RepairFlagSet, apply))
	default:
		var perr error
		if on, perr = strconv.ParseBool(given); perr != nil {
			return job.RepairOff, "", fmt.Errorf("--repair (RECON_REPAIR) must be true or false (--repair alone is true), got %q", given)
		}
	}
	apply = apply || c.Apply
	switch {
	case apply && !on:
		return job.RepairOff, warning, fmt.Errorf("--apply (REPAIR_APPLY) inserts the repair that --repair (RECON_REPAIR=true) plans: add --repair to plan and insert it, or drop --apply")
	case apply:
		return job.RepairApply, warning, nil
	case on:
		return job.RepairPrint, warning, nil
	}
	return job.RepairOff, warning, nil
}

// newRepairSpelling is how the new flags or variables ask for what an old
// --repair value or RECON_REPAIR value asked.
func newRepairSpelling(flag, apply bool) string {
	switch {
	case flag && apply:
		return "--repair --apply"
	case flag:
		return "--repair"
	case apply:
		return "RECON_REPAIR=true and REPAIR_APPLY=true"
	}
	return "RECON_REPAIR=true"
}
