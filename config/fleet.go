package config

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/report/storage"
)

// A fleet is many workspaces checked by one deployment: RECON_FLEET_FILE
// names a file of entries, each a workspace's name and the variables in
// which it differs from the shared ones, which stay variables:
//
//	# comment
//	[acme]
//	ELIDO_WORKSPACE_ID = 48213
//	ELIDO_API_KEY_FILE = /var/run/secrets/clickrecon/fleet/acme-elido-api-key
//	STORE_DSN_FILE     = /var/run/secrets/clickrecon/fleet/acme-store-dsn
//	RECON_TZ           = Europe/Warsaw
//
// A run of an entry (run --workspace NAME, --workspace-index I) reads its
// variables over the shared environment and is otherwise a run of one
// workspace, as without a fleet.

// FleetFileVar is the variable that names the fleet file; FleetSizeVar
// the number of workspaces an Indexed Job runs (its completions), when it
// says.
const (
	FleetFileVar = "RECON_FLEET_FILE"
	FleetSizeVar = "RECON_FLEET_SIZE"
)

// Entry is one workspace of a fleet.
type Entry struct {
	Name string
	// Prefix, when set (report_prefix), is the folder under the shared
	// RECON_REPORT_DIR its reports go to instead of its name.
	Prefix string
	// Vars are the entry's variables, as written (values trimmed).
	Vars map[string]string
	Line int // where its [name] is
}

// Fleet is the entries of a fleet file, in its order: an Indexed Job's
// completion index I runs the I-th.
type Fleet struct {
	File    string
	Entries []Entry
}

// entryName is a workspace's name: what its reports' folder, its log
// lines and its metrics are named by, and what serve lists a folder by.
var entryName = storage.WorkspaceName

// notPerEntry are the variables an entry cannot set: the fleet's own,
// and those that choose an entry.
var notPerEntry = []string{FleetFileVar, FleetSizeVar, "RECON_WORKSPACE", "RECON_WORKSPACE_INDEX"}

// knownVars returns every variable Config reads, with NAME_FILE for each
// secret.
func knownVars() map[string]bool {
	known := map[string]bool{}
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("env")
		if name, _, _ := strings.Cut(tag, ","); name != "" {
			known[name] = true
		}
	}
	for _, s := range secretVars {
		known[s+"_FILE"] = true
	}
	for _, v := range notPerEntry {
		known[v] = true // refused as the fleet's own, not as unknown
	}
	return known
}

// LoadFleet reads and checks the fleet file at path: YAML (a list of
// workspaces, fleetyaml.go) or [name] sections of NAME = value lines.
// Every mistake is listed at once, each with its line, its entry and
// what to fix.
func LoadFleet(path string) (Fleet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Fleet{}, fmt.Errorf("%s: read the fleet file: %w", FleetFileVar, err)
	}
	fl := Fleet{File: path}
	known := knownVars()
	var errs []error
	bad := func(line int, format string, args ...any) {
		at := path
		if line > 0 {
			at = fmt.Sprintf("%s:%d", path, line)
		}
		errs = append(errs, fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...)))
	}
	lines := 0
	if looksINI(string(b)) {
		fl.Entries, lines = parseINI(string(b), known, bad)
	} else {
		fl.Entries = parseYAML(b, known, bad)
		lines = strings.Count(string(b), "\n")
	}
	seen := map[string]int{}
	for _, e := range fl.Entries {
		switch name := e.Name; {
		case name == "":
			bad(e.Line, "a workspace has no name: give each a name (lower-case letters, digits and '-')")
		case !entryName.MatchString(name):
			bad(e.Line, "workspace name %q: use lower-case letters, digits and '-', at most 63, as a Kubernetes name", name)
		case strings.HasPrefix(name, storage.RepairPrefix):
			bad(e.Line, "workspace name %q: a folder named %s... is a repair plan's, beside the runs; choose another name", name, storage.RepairPrefix)
		case seen[name] > 0:
			bad(e.Line, "workspace %q is also at line %d: each name once", name, seen[name])
		}
		if seen[e.Name] == 0 {
			seen[e.Name] = e.Line
		}
		if p := e.Prefix; p != "" && (!entryName.MatchString(p) || strings.HasPrefix(p, storage.RepairPrefix)) {
			bad(e.Line, "workspace %q: report_prefix %q: a folder's name, as a workspace's (lower-case letters, digits and '-', not %s...)", e.Name, p, storage.RepairPrefix)
		}
		if e.Vars["ELIDO_WORKSPACE_ID"] == "" {
			bad(e.Line, "workspace %q has no ELIDO_WORKSPACE_ID: each entry names its Elido workspace", e.Name)
		}
	}
	if len(fl.Entries) == 0 && len(errs) == 0 {
		bad(lines, "no workspace: add one, with its name and ELIDO_WORKSPACE_ID")
	}
	return fl, errors.Join(errs...)
}

// parseINI reads the entries of a fleet file of [name] sections, and
// returns them with the file's number of lines.
func parseINI(text string, known map[string]bool, bad func(line int, format string, args ...any)) ([]Entry, int) {
	var entries []Entry
	sc := bufio.NewScanner(strings.NewReader(text))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "["):
			name, ok := strings.CutSuffix(strings.TrimPrefix(line, "["), "]")
			if !ok {
				bad(n, "%q: a workspace starts with [name] alone on its line", line)
			}
			entries = append(entries, Entry{Name: strings.TrimSpace(name), Vars: map[string]string{}, Line: n})
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case len(entries) == 0:
			bad(n, "%q comes before any [name]: a setting belongs to a workspace", line)
		case !ok || key == "":
			bad(n, "%q: write NAME = value", line)
		case slices.Contains(notPerEntry, key):
			bad(n, "%s is the fleet's own, not a workspace's", key)
		case !known[key]:
			bad(n, "workspace %q: %s is not a clickrecon variable (docs/contract.md lists them)", entries[len(entries)-1].Name, key)
		default:
			e := &entries[len(entries)-1]
			if _, twice := e.Vars[key]; twice {
				bad(n, "workspace %q sets %s twice", e.Name, key)
			}
			e.Vars[key] = value
		}
	}
	return entries, n
}

// Entry returns the entry named name.
func (f Fleet) Entry(name string) (Entry, error) {
	for _, e := range f.Entries {
		if e.Name == name {
			return e, nil
		}
	}
	var names []string
	for _, e := range f.Entries {
		names = append(names, e.Name)
	}
	return Entry{}, fmt.Errorf("--workspace %q is not in %s, which has %s", name, f.File, strings.Join(names, ", "))
}

// At returns the entry at index i (0-based, the file's order). size is
// RECON_FLEET_SIZE, the number of indexes the Indexed Job runs ("": not
// said): a fleet of another size would leave workspaces unchecked, or
// run indexes that have none, and is refused whatever i.
func (f Fleet) At(i int, size string) (Entry, error) {
	if size != "" && size != strconv.Itoa(len(f.Entries)) {
		return Entry{}, fmt.Errorf("%s is %s (the Indexed Job's completions), but %s has %d workspaces: set completions to %d, or remove the entries that should not run",
			FleetSizeVar, size, f.File, len(f.Entries), len(f.Entries))
	}
	if i < 0 || i >= len(f.Entries) {
		return Entry{}, fmt.Errorf("--workspace-index %d is out of %s's %d workspaces (0 to %d): set the Indexed Job's completions to the number of workspaces", i, f.File, len(f.Entries), len(f.Entries)-1)
	}
	return f.Entries[i], nil
}

// Env is the environment of a run of e: its variables over shared. A
// secret it sets either way (NAME or NAME_FILE) hides the other way of
// the shared environment, so that an entry's own key is never "set
// twice" against a shared one. When e does not set RECON_REPORT_DIR, its
// reports go to a folder named for it (or its Prefix) under the shared one.
func (e Entry) Env(shared envconfig.Lookuper) envconfig.Lookuper {
	vars := map[string]string{}
	for k, v := range e.Vars {
		vars[k] = v
	}
	if _, ok := vars["RECON_REPORT_DIR"]; !ok {
		dir, found := shared.Lookup("RECON_REPORT_DIR")
		if !found || dir == "" {
			dir = "reports" // the default of RECON_REPORT_DIR
		}
		folder := e.Name
		if e.Prefix != "" {
			folder = e.Prefix
		}
		vars["RECON_REPORT_DIR"] = Under(dir, folder)
	}
	return entryEnv{vars: vars, shared: shared}
}

// Under is the folder or object prefix name under dir: dir/name, the
// name put before a URL's query.
func Under(dir, name string) string {
	base, query, hasQuery := strings.Cut(dir, "?")
	base = strings.TrimRight(base, "/") + "/" + name
	if hasQuery {
		return base + "?" + query
	}
	return base
}

type entryEnv struct {
	vars   map[string]string
	shared envconfig.Lookuper
}

func (e entryEnv) Lookup(key string) (string, bool) {
	if v, ok := e.vars[key]; ok {
		return v, true
	}
	// NAME set by the entry hides the shared NAME_FILE, and NAME_FILE
	// the shared NAME.
	if base, ok := strings.CutSuffix(key, "_FILE"); ok {
		if _, own := e.vars[base]; own {
			return "", false
		}
	} else if _, own := e.vars[key+"_FILE"]; own {
		return "", false
	}
	return e.shared.Lookup(key)
}
