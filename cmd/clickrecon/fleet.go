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
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/sources/elido"
)

// The variables of --workspace and --workspace-index.
const (
	workspaceVar      = "RECON_WORKSPACE"
	workspaceIndexVar = "RECON_WORKSPACE_INDEX"
)

// fleetChoice is the workspace of the fleet file args and env choose:
// by name, by index, or both (a mistake); and the names it was chosen by,
// the flags' or the variables', for the messages.
type fleetChoice struct {
	name, index       string
	nameSet, indexSet bool
	nameOpt, indexOpt string // "--workspace", or "RECON_WORKSPACE"; "--workspace-index", or ...
}

// fleetFlags returns the workspace --workspace or --workspace-index in
// args chooses (either spelling: -flag or --flag, with = or a separate
// value), before the flags are parsed: the entry they choose sets the
// variables everything else is read from. Without either flag, the
// variables RECON_WORKSPACE and RECON_WORKSPACE_INDEX in env choose (set
// and not empty); a flag replaces both variables, as a window given by
// flags replaces one given by variables.
func fleetFlags(args []string, env envconfig.Lookuper) fleetChoice {
	ch := fleetChoice{nameOpt: "--workspace", indexOpt: "--workspace-index"}
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
			ch.name, ch.nameSet = value, true
		} else {
			ch.index, ch.indexSet = value, true
		}
	}
	if ch.nameSet || ch.indexSet {
		return ch
	}
	ch.nameOpt, ch.indexOpt = workspaceVar, workspaceIndexVar
	if v, _ := env.Lookup(workspaceVar); v != "" {
		ch.name, ch.nameSet = v, true
	}
	if v, _ := env.Lookup(workspaceIndexVar); v != "" {
		ch.index, ch.indexSet = v, true
	}
	return ch
}

// fleetEntryOf returns the entry of the fleet file RECON_FLEET_FILE that
// --workspace or --workspace-index in args (or their variables in env)
// chooses, and the fleet it is of; ok false when none is given. An error
// is a usage error: exit 2 before anything is read.
func fleetEntryOf(args []string, env envconfig.Lookuper) (e config.Entry, fleet config.Fleet, ok bool, err error) {
	ch := fleetFlags(args, env)
	if !ch.nameSet && !ch.indexSet {
		return e, fleet, false, nil
	}
	if ch.nameSet && ch.indexSet {
		return e, fleet, true, fmt.Errorf("%s and %s both choose a workspace: give one", ch.nameOpt, ch.indexOpt)
	}
	file, _ := env.Lookup(config.FleetFileVar)
	if file == "" {
		return e, fleet, true, fmt.Errorf("%s and %s choose a workspace of the fleet file: set %s", ch.nameOpt, ch.indexOpt, config.FleetFileVar)
	}
	fleet, err = config.LoadFleet(file)
	if err != nil {
		return e, fleet, true, err
	}
	if ch.nameSet {
		e, err = fleet.Entry(ch.name)
		return e, fleet, true, namedBy(err, "--workspace", ch.nameOpt)
	}
	i, err := strconv.Atoi(ch.index)
	if err != nil {
		return e, fleet, true, fmt.Errorf("%s %q is not a whole number (an Indexed Job passes $(JOB_COMPLETION_INDEX))", ch.indexOpt, ch.index)
	}
	size, _ := env.Lookup(config.FleetSizeVar)
	e, err = fleet.At(i, size)
	return e, fleet, true, namedBy(err, "--workspace-index", ch.indexOpt)
}

// namedBy is err of the fleet, which names the choice by its flag (flag
// "--workspace ..."), with the choice named by opt, the variable that
// made it when no flag did.
func namedBy(err error, flag, opt string) error {
	if err == nil || flag == opt {
		return err
	}
	if rest, ok := strings.CutPrefix(err.Error(), flag+" "); ok {
		return errors.New(opt + " " + rest)
	}
	return err
}

// fleetRun runs the command cmd (run or check) as a run of one workspace
// when args (or env) choose one of the fleet's: with the entry's
// variables over env, and every log line naming it. handled false: no
// workspace was chosen, or the help was asked for (it needs none), and
// the caller runs cmd as it is.
func fleetRun(ctx context.Context, cmd func(context.Context, []string, envconfig.Lookuper, io.Writer, io.Writer, deps) int,
	args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) (code int, handled bool) {
	if helpAsked(args) {
		return 0, false
	}
	e, fleet, ok, err := fleetEntryOf(args, env)
	if !ok {
		return 0, false
	}
	if err != nil {
		return usageExit(stderr, err), true
	}
	d.workspace = e.Name
	// Every message says its workspace: a channel may be the fleet's.
	d.alert = append(slices.Clip(d.alert), alert.WithFleetWorkspace(e.Name))
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
