package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// WorkspaceName is the shape of a fleet workspace's name (lower-case
// letters, digits and '-', at most 63, as a Kubernetes name): a run of it
// writes under the folder or prefix of that name (config.Under). No run
// key (digits and '_') and no folder of clickrecon's own (a dot, '_')
// has it; a name starting with RepairPrefix is a repair plan's.
var WorkspaceName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// isWorkspace reports whether name, a folder under a destination, may be
// a fleet workspace's.
func isWorkspace(name string) bool {
	return WorkspaceName.MatchString(name) && !strings.HasPrefix(name, RepairPrefix)
}

// Workspace is a fleet workspace's folder under a destination, as the
// index shows it.
type Workspace struct {
	Name string
	// Runs counts its runs (as Runs lists them); Latest is the newest.
	Runs   int
	Latest Run
}

// Sub is the destination of the workspace name under d: the folder
// d/name, or the prefix prefix/name/ in the same bucket. It shares d's
// client: close d, not it. ok is false when name is not a workspace's.
func (d *Dest) Sub(name string) (sub *Dest, ok bool) {
	if !isWorkspace(name) {
		return nil, false
	}
	if d.bucket == nil {
		return &Dest{dir: filepath.Join(d.dir, name), borrowed: true}, true
	}
	b := &bucket{store: d.bucket.store, prefix: d.bucket.prefix + name + "/"}
	return &Dest{bucket: b, base: d.base + "/" + name, borrowed: true}, true
}

// Workspaces lists the folders under d that hold a fleet workspace's
// runs, by name: each a folder named as a workspace (WorkspaceName) in
// which Runs lists at least one run, with its newest. Other folders are
// left out. It only reads, a report.json's first fields at a time.
func (d *Dest) Workspaces(ctx context.Context) ([]Workspace, error) {
	names, err := d.WorkspaceNames(ctx)
	if err != nil {
		return nil, err
	}
	var out []Workspace
	for _, name := range names {
		sub, _ := d.Sub(name)
		runs, err := sub.Runs(ctx)
		if err != nil {
			return nil, err
		}
		if len(runs) > 0 {
			out = append(out, Workspace{Name: name, Runs: len(runs), Latest: runs[0]})
		}
	}
	return out, nil
}

// WorkspaceNames lists, in name order, the folders under d named as a
// fleet workspace's (WorkspaceName), whether or not they hold runs.
func (d *Dest) WorkspaceNames(ctx context.Context) ([]string, error) {
	var names []string
	if d.bucket == nil {
		entries, err := os.ReadDir(d.dir)
		if err != nil {
			return nil, fmt.Errorf("list reports in %s: %w", d.dir, err)
		}
		for _, e := range entries {
			if e.IsDir() && isWorkspace(e.Name()) { // a symbolic link is not followed
				names = append(names, e.Name())
			}
		}
	} else {
		it := d.bucket.List("", "/")
		for {
			obj, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("list reports in %s: %w", d.base, err)
			}
			if name := strings.TrimSuffix(obj.Key, "/"); obj.IsDir && isWorkspace(name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}
