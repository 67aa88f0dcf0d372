package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// drilledParts returns the days, links, countries and findings of the one
// report.json under dir, as JSON: what two drill-downs of the same night
// must agree on.
func drilledParts(dir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "report.json"))
	if err != nil || len(files) != 1 {
		return nil, fmt.Errorf("want one report.json under %s, found %v (%v)", dir, files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]json.RawMessage{"days": rep["days"], "links": rep["links"], "countries": rep["countries"], "findings": rep["findings"]})
}

// measured is what one run cost: wall time, peak RSS in KiB, CPU (user
// and system) and the time its log says it spent reading the store.
type measured struct {
	took, cpu, store time.Duration
	rss              int64
}

// runBinary runs bin under GNU time and measures it. Exit 0 and 1 (gaps
// found) are both a completed run.
func runBinary(ctx context.Context, timeBin, bin string, args, env []string) (measured, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, timeBin, append([]string{"-v", bin}, args...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, nil, &stderr
	started := time.Now()
	err := cmd.Run()
	m := measured{took: time.Since(started)}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return m, fmt.Errorf("%s: %w\n%s", bin, err, stderr.String())
	}
	out := stderr.String()
	if dir := os.Getenv("RECON_BENCH_LOGS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, filepath.Base(bin)+".log"), stderr.Bytes(), 0o644)
	}
	rss := regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`).FindStringSubmatch(out)
	if rss == nil {
		return m, fmt.Errorf("no peak RSS in the output of %s:\n%s", timeBin, out)
	}
	m.rss, _ = strconv.ParseInt(rss[1], 10, 64)
	for _, re := range []string{`User time \(seconds\): ([0-9.]+)`, `System time \(seconds\): ([0-9.]+)`} {
		if f := regexp.MustCompile(re).FindStringSubmatch(out); f != nil {
			secs, _ := strconv.ParseFloat(f[1], 64)
			m.cpu += time.Duration(secs * float64(time.Second))
		}
	}
	// The store's reads, as the run logs them: the window's totals and
	// the drilled days' links.
	for _, f := range regexp.MustCompile(`"msg":"store (?:links )?read"[^\n]*"duration_ms":(\d+)`).FindAllStringSubmatch(out, -1) {
		ms, _ := strconv.ParseInt(f[1], 10, 64)
		m.store += time.Duration(ms) * time.Millisecond
	}
	return m, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func formatRequests(reqs map[string]int) string {
	keys := slices.Sorted(maps.Keys(reqs))
	var parts []string
	total := 0
	for _, k := range keys {
		if reqs[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, reqs[k]))
			total += reqs[k]
		}
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, " "))
}
