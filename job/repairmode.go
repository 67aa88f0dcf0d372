package job

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRepairMode reads run's --repair and --apply (RECON_REPAIR,
// REPAIR_APPLY): the one place they become a run's mode: plan the repair
// of the settled missing days the run finds (RepairPrint), and insert the
// clicks it plans too (RepairApply). repair is the value as given, byFlag
// says --repair gave it rather than RECON_REPAIR. An old spelling (print
// or apply) still works, with a warning that says the new one. --apply
// alone is refused: it would write a repair that nothing plans.
func ParseRepairMode(repair string, byFlag, apply bool) (mode RepairMode, warning string, err error) {
	var on, applyOld bool
	name := "RECON_REPAIR=" + repair
	if byFlag {
		name = "--repair " + repair
	}
	switch v := strings.ToLower(strings.TrimSpace(repair)); v {
	case "":
	case "print", "apply":
		on, applyOld = true, v == "apply"
		warning = fmt.Sprintf("%s is the old spelling and goes in the next release: write %s", name, newRepairSpelling(byFlag, applyOld))
	default:
		var perr error
		if on, perr = strconv.ParseBool(repair); perr != nil {
			return RepairOff, "", fmt.Errorf("--repair (RECON_REPAIR) must be true or false (--repair alone is true), got %q", repair)
		}
	}
	apply = applyOld || apply
	switch {
	case apply && !on:
		return RepairOff, warning, fmt.Errorf("--apply (REPAIR_APPLY) inserts the repair that --repair (RECON_REPAIR=true) plans: add --repair to plan and insert it, or drop --apply")
	case apply:
		return RepairApply, warning, nil
	case on:
		return RepairPrint, warning, nil
	}
	return RepairOff, warning, nil
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
