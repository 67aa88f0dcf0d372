package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/config"
)

// fleetFlags returns the values of --workspace and --workspace-index in
// args (either spelling: -flag or --flag, with = or a separate value),
// before the flags are parsed: the entry they choose sets the variables
// everything else is read from.
func fleetFlags(args []string) (name, index string, nameSet, indexSet bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		flagName, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (flagName != "workspace" && flagName != "workspace-index") {
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		if flagName == "workspace" {
			name, nameSet = value, true
		} else {
			index, indexSet = value, true
		}
	}
	return name, index, nameSet, indexSet
}

// fleetEntry returns the entry of the fleet file RECON_FLEET_FILE that
// --workspace or --workspace-index in args chooses, ok false when neither
// is given. An error is a usage error: exit 2 before anything is read.
func fleetEntry(args []string, env envconfig.Lookuper) (e config.Entry, ok bool, err error) {
	name, index, nameSet, indexSet := fleetFlags(args)
	if !nameSet && !indexSet {
		return e, false, nil
	}
	if nameSet && indexSet {
		return e, true, errors.New("--workspace and --workspace-index both choose a workspace: give one")
	}
	file, _ := env.Lookup(config.FleetFileVar)
	if file == "" {
		return e, true, fmt.Errorf("--workspace and --workspace-index choose a workspace of the fleet file: set %s", config.FleetFileVar)
	}
	fleet, err := config.LoadFleet(file)
	if err != nil {
		return e, true, err
	}
	if nameSet {
		e, err = fleet.Entry(name)
		return e, true, err
	}
	i, err := strconv.Atoi(index)
	if err != nil {
		return e, true, fmt.Errorf("--workspace-index %q is not a whole number (an Indexed Job passes $(JOB_COMPLETION_INDEX))", index)
	}
	size, _ := env.Lookup(config.FleetSizeVar)
	e, err = fleet.At(i, size)
	return e, true, err
}

// fleetRun runs the command cmd (run or check) as a run of one workspace
// when args choose one of the fleet's: with the entry's variables over
// env, and every log line naming it. handled false: no workspace was
// chosen, and the caller runs cmd as it is.
func fleetRun(ctx context.Context, cmd func(context.Context, []string, envconfig.Lookuper, io.Writer, io.Writer, deps) int,
	args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) (code int, handled bool) {
	e, ok, err := fleetEntry(args, env)
	if !ok {
		return 0, false
	}
	if err != nil {
		return usageExit(stderr, err), true
	}
	d.workspace = e.Name
	return cmd(ctx, args, e.Env(env), stdout, stderr, d), true
}

// checkFleet is "clickrecon check" with RECON_FLEET_FILE and no
// workspace chosen: every workspace's check, side by side, each line
// named by its workspace, one workspace after another (those that share
// an Elido key together). The exit code is the worst: 2 when a
// line of any workspace is FAILED, else 3 when one is UNREACHABLE.
func checkFleet(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) (int, bool) {
	file, _ := env.Lookup(config.FleetFileVar)
	if file == "" {
		return 0, false
	}
	fleet, err := config.LoadFleet(file)
	if err != nil {
		return usageExit(stderr, err), true
	}
	type result struct {
		out, errOut bytes.Buffer
		code        int
	}
	results := make([]result, len(fleet.Entries))
	groups := map[string][]int{} // by the Elido key an entry reads
	var order []string
	for i, e := range fleet.Entries {
		k := keyOf(e.Env(env))
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	// One workspace after another: two checks of a local report folder
	// at once would each create, and remove, the parent folder they
	// share, and fail each other.
	for _, k := range order {
		for _, i := range groups[k] {
			e := fleet.Entries[i]
			ed := d
			ed.workspace = e.Name
			r := &results[i]
			r.code = cmdCheck(ctx, args, e.Env(env), &r.out, &r.errOut, ed)
		}
	}
	code := exitOK
	for i, e := range fleet.Entries {
		r := &results[i]
		for _, line := range strings.SplitAfter(r.out.String()+r.errOut.String(), "\n") {
			if strings.TrimSpace(line) != "" {
				fmt.Fprintf(stdout, "%-20s %s", e.Name, line)
				if !strings.HasSuffix(line, "\n") {
					fmt.Fprintln(stdout)
				}
			}
		}
		switch {
		case r.code == exitUsage:
			code = exitUsage
		case r.code == exitIncomplete && code == exitOK:
			code = exitIncomplete
		}
	}
	return code, true
}

// keyOf names the Elido key a workspace's environment reads, without
// holding it: entries with the same name share a key.
func keyOf(env envconfig.Lookuper) string {
	if f, ok := env.Lookup("ELIDO_API_KEY_FILE"); ok && f != "" {
		return "file:" + f
	}
	k, _ := env.Lookup("ELIDO_API_KEY")
	return "key:" + strconv.Itoa(len(k)) + ":" + k
}

// helpAsked reports whether args ask for the help, which needs no
// workspace.
func helpAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}
