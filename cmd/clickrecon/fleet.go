package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sethvargo/go-envconfig"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/sources/elido"
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
	e, _, ok, err = fleetEntryOf(args, env)
	return e, ok, err
}

// fleetEntryOf is fleetEntry, with the fleet the entry is of.
func fleetEntryOf(args []string, env envconfig.Lookuper) (e config.Entry, fleet config.Fleet, ok bool, err error) {
	name, index, nameSet, indexSet := fleetFlags(args)
	if !nameSet && !indexSet {
		return e, fleet, false, nil
	}
	if nameSet && indexSet {
		return e, fleet, true, errors.New("--workspace and --workspace-index both choose a workspace: give one")
	}
	file, _ := env.Lookup(config.FleetFileVar)
	if file == "" {
		return e, fleet, true, fmt.Errorf("--workspace and --workspace-index choose a workspace of the fleet file: set %s", config.FleetFileVar)
	}
	fleet, err = config.LoadFleet(file)
	if err != nil {
		return e, fleet, true, err
	}
	if nameSet {
		e, err = fleet.Entry(name)
		return e, fleet, true, err
	}
	i, err := strconv.Atoi(index)
	if err != nil {
		return e, fleet, true, fmt.Errorf("--workspace-index %q is not a whole number (an Indexed Job passes $(JOB_COMPLETION_INDEX))", index)
	}
	size, _ := env.Lookup(config.FleetSizeVar)
	e, err = fleet.At(i, size)
	return e, fleet, true, err
}

// fleetRun runs the command cmd (run or check) as a run of one workspace
// when args choose one of the fleet's: with the entry's variables over
// env, and every log line naming it. handled false: no workspace was
// chosen, and the caller runs cmd as it is.
func fleetRun(ctx context.Context, cmd func(context.Context, []string, envconfig.Lookuper, io.Writer, io.Writer, deps) int,
	args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) (code int, handled bool) {
	e, fleet, ok, err := fleetEntryOf(args, env)
	if !ok {
		return 0, false
	}
	if err != nil {
		return usageExit(stderr, err), true
	}
	d.workspace = e.Name
	return cmd(ctx, args, sharedKeyRate(fleet, e, env), stdout, stderr, d), true
}

// sharedKeyRate is the environment of a run of e: its variables over env,
// and, when other workspaces of fleet read the same Elido key, its share
// of that key's rate limit: the smallest ELIDO_RATE_LIMIT among them
// divided by how many they are (at least 1 a minute). Elido limits
// requests per key, and the Indexed Job may run them all at once: their
// requests together never pass the limit, whichever run when.
func sharedKeyRate(fleet config.Fleet, e config.Entry, env envconfig.Lookuper) envconfig.Lookuper {
	own := e.Env(env)
	_, rates, sharers := keyShares(fleet, env)
	key := keyOf(own)
	if sharers[key] < 2 {
		return own
	}
	share := max(1, rates[key]/sharers[key])
	return envconfig.MultiLookuper(envconfig.MapLookuper(map[string]string{"ELIDO_RATE_LIMIT": strconv.Itoa(share)}), own)
}

// fleetCheckers is how many workspaces check probes at once.
const fleetCheckers = 8

// checkFleet is "clickrecon check" with RECON_FLEET_FILE and no
// workspace chosen: every workspace's check, side by side, each line
// named by its workspace, in the fleet file's order whatever order they
// finish in. Up to fleetCheckers workspaces are checked at once; the
// entries that read the same Elido key share one rate limiter, at the
// smallest ELIDO_RATE_LIMIT among them, so that together they keep to
// the key's limit. The exit code is the worst: 2 when a line of any
// workspace is FAILED, else 3 when one is UNREACHABLE.
func checkFleet(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) (int, bool) {
	file, _ := env.Lookup(config.FleetFileVar)
	if file == "" || helpAsked(args) { // the help is one, not one per workspace
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
	limiters := keyLimiters(fleet, env)
	var g errgroup.Group
	g.SetLimit(fleetCheckers)
	for i, e := range fleet.Entries {
		g.Go(func() error {
			ed := d
			ed.workspace = e.Name
			ed.elido = append(slices.Clip(d.elido), elido.WithLimiter(limiters[i]))
			r := &results[i]
			r.code = cmdCheck(ctx, args, e.Env(env), &r.out, &r.errOut, ed)
			return nil
		})
	}
	g.Wait()
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

// keyLimiters returns, for each entry of fleet (by index), the rate
// limiter its Elido client waits on: one per Elido key, shared by every
// entry that reads it, at the smallest ELIDO_RATE_LIMIT among them (an
// unreadable one is left to the entry's own check to refuse).
func keyLimiters(fleet config.Fleet, env envconfig.Lookuper) []*rate.Limiter {
	keys, rates, _ := keyShares(fleet, env)
	byKey := map[string]*rate.Limiter{}
	out := make([]*rate.Limiter, len(fleet.Entries))
	for i, k := range keys {
		if byKey[k] == nil {
			byKey[k] = elido.NewLimiter(rates[k])
		}
		out[i] = byKey[k]
	}
	return out
}

// keyShares returns, for each entry of fleet (by index), the name of the
// Elido key it reads (keyOf); for each key, the smallest ELIDO_RATE_LIMIT
// among the entries that read it (an unreadable one is left to the
// entry's own check to refuse), and how many entries read it.
func keyShares(fleet config.Fleet, env envconfig.Lookuper) (keys []string, rates, sharers map[string]int) {
	rates, sharers = map[string]int{}, map[string]int{}
	keys = make([]string, len(fleet.Entries))
	for i, e := range fleet.Entries {
		ee := e.Env(env)
		keys[i] = keyOf(ee)
		sharers[keys[i]]++
		r := 60 // the default of ELIDO_RATE_LIMIT
		if v, ok := ee.Lookup("ELIDO_RATE_LIMIT"); ok && v != "" {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				r = n
			}
		}
		if old, seen := rates[keys[i]]; !seen || r < old {
			rates[keys[i]] = r
		}
	}
	return keys, rates, sharers
}

// keyOf names the Elido key a workspace's environment reads, without
// holding it: entries with the same name share a key. A key in a file is
// named by a digest of what the file holds (trimmed, as the key is read),
// so that two files of one key are one key; a file that cannot be read,
// by its path.
func keyOf(env envconfig.Lookuper) string {
	if f, ok := env.Lookup("ELIDO_API_KEY_FILE"); ok && f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "file:" + f
		}
		return digest(strings.TrimSpace(string(b)))
	}
	k, _ := env.Lookup("ELIDO_API_KEY")
	return digest(k)
}

// digest names a key by its SHA-256.
func digest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "key:" + hex.EncodeToString(sum[:])
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
