package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// measured is what one run of the binary cost and how it ended: wall
// time, CPU (user and system), peak RSS in KiB and its exit code.
type measured struct {
	took, cpu time.Duration
	rss       int64
	exit      int
	stderr    []byte // its log and GNU time's lines, for a failure
}

var (
	rssLine  = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
	cpuLines = []*regexp.Regexp{regexp.MustCompile(`User time \(seconds\): ([0-9.]+)`), regexp.MustCompile(`System time \(seconds\): ([0-9.]+)`)}
	exitLine = regexp.MustCompile(`Exit status: (\d+)`)
)

// runBinary runs bin with args and env under GNU time and measures it.
// Any exit code is a measured run; an error is a run that could not be
// measured.
func runBinary(ctx context.Context, timeBin, bin string, args, env []string) (measured, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, timeBin, append([]string{"-v", bin}, args...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, nil, &stderr
	started := time.Now()
	err := cmd.Run()
	m := measured{took: time.Since(started), stderr: stderr.Bytes()}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return m, fmt.Errorf("%s: %w", bin, err)
	}
	out := stderr.String()
	rss, code := rssLine.FindStringSubmatch(out), exitLine.FindStringSubmatch(out)
	if rss == nil || code == nil {
		return m, fmt.Errorf("no peak RSS or exit status in the output of %s (%v):\n%s", timeBin, err, out)
	}
	m.rss, _ = strconv.ParseInt(rss[1], 10, 64)
	m.exit, _ = strconv.Atoi(code[1])
	for _, re := range cpuLines {
		if f := re.FindStringSubmatch(out); f != nil {
			secs, _ := strconv.ParseFloat(f[1], 64)
			m.cpu += time.Duration(secs * float64(time.Second))
		}
	}
	return m, nil
}

// quantile returns the q-quantile of xs by the nearest rank (q 0.5: the
// lower median of an even count, as p95 is the value 95 % of them do
// not exceed).
func quantile[T int64 | time.Duration](xs []T, q float64) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}
