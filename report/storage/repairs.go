package storage

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// RepairPrefix begins the name of the folder a repair writes a run's plan
// to, beside the run folders: repair-<run key>. The viewer serves it
// under the same name.
const RepairPrefix = "repair-"

// RepairDir is the local folder a repair of the run runKey writes its
// plan to, in the report folder dir.
func RepairDir(dir, runKey string) string { return filepath.Join(dir, RepairPrefix+runKey) }

// HasRepair reports whether the run runKey has a repair plan's folder,
// without listing it (RepairFiles does).
func (d *Dest) HasRepair(runKey string) bool {
	root, _, err := d.repairRoot(runKey)
	if err != nil {
		return false
	}
	root.Close()
	return true
}

// repairRoot opens the local report folder, which the caller closes, and
// returns the name in it of runKey's plan folder: ErrNoReport when there
// is none (an object store holds none), never through a symbolic link.
func (d *Dest) repairRoot(runKey string) (*os.Root, string, error) {
	if d.bucket != nil || !isRunKey(runKey) {
		return nil, "", ErrNoReport
	}
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, "", err
	}
	dir := RepairPrefix + runKey
	if fi, err := root.Lstat(dir); err != nil || !fi.IsDir() {
		root.Close()
		return nil, "", ErrNoReport
	}
	return root, dir, nil
}

// isRepairFolder reports whether name is exactly repair- and a run key.
func isRepairFolder(name string) bool {
	key, ok := strings.CutPrefix(name, RepairPrefix)
	return ok && isRunKey(key)
}

// repairTypes are the files of a repair plan that are served, by
// extension, with their content type: the plan's CSVs, its SQL and the
// journal of an --apply, as text. Anything else in the folder is not.
var repairTypes = map[string]string{
	".csv": "text/csv; charset=utf-8",
	".sql": "text/plain; charset=utf-8",
	".log": "text/plain; charset=utf-8",
	".txt": "text/plain; charset=utf-8",
}

// RepairFile is one file of a run's repair plan.
type RepairFile struct {
	Name     string // its path in the plan's folder: repair.csv, or one subfolder deep (a/repair.csv)
	Size     int64
	Modified time.Time
}

// RepairFiles lists the files of the run runKey's repair plan, the folder
// repair-<run key> beside the runs in a local folder, by name: regular
// files of the kinds repairTypes names, in the folder or one subfolder
// deep, never through a symbolic link. An object store holds no plan (a
// repair writes to a local folder only): it is ErrNoReport, as is a
// folder that is not there.
func (d *Dest) RepairFiles(runKey string) ([]RepairFile, error) {
	root, dir, err := d.repairRoot(runKey)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var files []RepairFile
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		entries, err := fs.ReadDir(root.FS(), path.Join(dir, rel))
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := path.Join(rel, e.Name())
			switch {
			case e.Type().IsDir() && depth == 0 && checkName(e.Name()) == nil:
				if err := walk(name, depth+1); err != nil {
					return err
				}
			case e.Type().IsRegular() && repairTypes[path.Ext(name)] != "" && checkName(e.Name()) == nil:
				fi, err := e.Info()
				if err != nil {
					continue // removed since it was listed
				}
				files = append(files, RepairFile{Name: name, Size: fi.Size(), Modified: fi.ModTime()})
			}
		}
		return nil
	}
	if err := walk("", 0); err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b RepairFile) int { return strings.Compare(a.Name, b.Name) })
	return files, nil
}

// OpenRepairFile opens the file name (as RepairFiles names it) of the run
// runKey's repair plan for reading. Anything RepairFiles does not list is
// ErrNoReport: another kind of file, a symbolic link, a name that is not
// plain.
func (d *Dest) OpenRepairFile(runKey, name string) (*RunFile, error) {
	if d.bucket != nil || !isRunKey(runKey) {
		return nil, ErrNoReport
	}
	elems := strings.Split(name, "/")
	if len(elems) > 2 || repairTypes[path.Ext(name)] == "" {
		return nil, ErrNoReport
	}
	for _, e := range elems {
		if checkName(e) != nil {
			return nil, ErrNoReport
		}
	}
	f, err := d.openLocal(append([]string{RepairPrefix + runKey}, elems...)...)
	if err != nil {
		return nil, noReport(err)
	}
	rf, err := localFile(f)
	if err != nil {
		return nil, err
	}
	rf.ContentType = repairTypes[path.Ext(name)]
	return rf, nil
}
