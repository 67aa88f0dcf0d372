package clickrecon_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/clickrecon/clickrecon"

// goPackages returns the folders of the repository that hold Go files,
// as slash paths relative to its root ("." for the root), with the
// imports of their files (tests included) in this module.
func goPackages(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if _, ok := pkgs[dir]; !ok {
			pkgs[dir] = nil
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			if p == module || strings.HasPrefix(p, module+"/") {
				pkgs[dir] = append(pkgs[dir], strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// internal/ holds leaf helpers only: none of its packages, nor their
// tests, imports the pipeline (job, check, repair, reconcile, report,
// sources), the configuration, the demo or the commands. What wires the
// pipeline together lives beside cmd.
func TestInternalHoldsOnlyLeafHelpers(t *testing.T) {
	pipeline := []string{"job", "check", "repair", "reconcile", "report", "sources", "config", "demo", "cmd", "sim"}
	checked := 0
	for dir, imports := range goPackages(t) {
		if !strings.HasPrefix(dir, "internal/") {
			continue
		}
		checked++
		for _, p := range imports {
			top, _, _ := strings.Cut(p, "/")
			if p == "" || slices.Contains(pipeline, top) {
				t.Errorf("%s imports %s: internal/ is for leaf helpers; move the package beside cmd, or the import out", dir, strings.TrimSuffix(module+"/"+p, "/"))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package found under internal/")
	}
}

// mapRow is a path of the README's map of the code: `path/` in the first
// cell of a row of the table under "## The code".
var mapRow = regexp.MustCompile("(?m)^\\| `([^`]+)/`")

// mapPaths returns the folders the README's map of the code names in the
// first cell of its rows (a cell may name several, as `a/`, `b/`).
func mapPaths(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(b), "\n## The code\n")
	if !ok {
		t.Fatal(`README.md has no "## The code" section`)
	}
	code, _, _ = strings.Cut(code, "\n## ")
	var paths []string
	for _, line := range strings.Split(code, "\n") {
		if !mapRow.MatchString(line) {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([^`]+)/`").FindAllStringSubmatch(first, -1) {
			paths = append(paths, m[1])
		}
	}
	if len(paths) == 0 {
		t.Fatal("the README's map of the code names no folder")
	}
	return paths
}

// The README's map of the code matches the packages there are: every
// folder it names holds Go code or SQL, and every package lives under a
// folder it names.
func TestReadmeMapMatchesThePackages(t *testing.T) {
	paths := mapPaths(t)
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			t.Errorf("the README's map names %s/, which is not a folder of the repository", p)
		}
	}
	for dir := range goPackages(t) {
		if dir == "." {
			continue
		}
		covered := slices.ContainsFunc(paths, func(p string) bool { return dir == p || strings.HasPrefix(dir, p+"/") })
		if !covered {
			t.Errorf("package folder %s/ is under no folder the README's map of the code names", dir)
		}
	}
}
