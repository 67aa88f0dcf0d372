// Command serve-bench measures the peak memory of clickrecon serve over
// many large reports: it writes -runs reports of about -mib MiB each (a
// report.json whose links table holds most of it) into a folder of its
// own, starts the binary's serve under /usr/bin/time -v, requests the
// index -index times and then every file of every run once (reading each
// answer through), stops it with SIGINT, and prints the folder's size,
// what it requested and the peak RSS /usr/bin/time reports.
//
// Run it from the repository root, with -binary a built clickrecon
// (go build -o /tmp/clickrecon ./cmd/clickrecon); see BENCHMARKS.md.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
)

func main() {
	binary := flag.String("binary", "", "the clickrecon binary to measure (required)")
	runs := flag.Int("runs", 10, "reports to write")
	mib := flag.Int("mib", 12, "about how many MiB each report.json holds")
	index := flag.Int("index", 5, "how many times to request the index")
	dir := flag.String("dir", "", "the folder to write the reports to, kept (default: a temporary one, removed at the end); a run already there is not written again, so that two binaries are measured over the same reports")
	flag.Parse()
	if *binary == "" {
		fmt.Fprintln(os.Stderr, "serve-bench: give -binary, a built clickrecon")
		os.Exit(2)
	}
	if err := bench(*binary, *dir, *runs, *mib, *index); err != nil {
		fmt.Fprintln(os.Stderr, "serve-bench:", err)
		os.Exit(1)
	}
}

func bench(binary, dir string, runs, mib, index int) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "serve-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	keys, size, err := writeReports(dir, runs, mib)
	if err != nil {
		return err
	}
	fmt.Printf("reports: %d runs, %.1f MiB in %s\n", runs, float64(size)/(1<<20), dir)

	cmd := exec.Command("/usr/bin/time", "-v", binary, "serve", "--addr", "127.0.0.1:0", "--report-dir", dir)
	// A group of its own: SIGINT reaches serve, which /usr/bin/time
	// ignores while it waits.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	stop := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	defer stop()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Wait()
		return fmt.Errorf("serve printed no address: %v\n%s", err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	m := regexp.MustCompile(`http://\S+/`).FindString(line)
	if m == "" {
		return fmt.Errorf("serve printed %q: no address", line)
	}

	start := time.Now()
	var got int64
	var requests int
	for range index {
		n, err := fetch(m)
		if err != nil {
			return err
		}
		got += n
		requests++
	}
	for _, key := range keys {
		for _, name := range report.Files {
			n, err := fetch(m + key + "/" + name)
			if err != nil {
				return err
			}
			got += n
			requests++
		}
	}
	elapsed := time.Since(start)
	stop()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("serve: %v\n%s", err, stderr.String())
	}
	rss := regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`).FindStringSubmatch(stderr.String())
	if rss == nil {
		return fmt.Errorf("no peak RSS in /usr/bin/time's output:\n%s", stderr.String())
	}
	kb, _ := strconv.Atoi(rss[1])
	fmt.Printf("requests: %d (the index %d times, then every file of every run), %.1f MiB answered in %s\n",
		requests, index, float64(got)/(1<<20), elapsed.Round(time.Millisecond))
	fmt.Printf("peak RSS: %.1f MiB\n", float64(kb)/1024)
	return nil
}

// fetch requests u and reads its answer through; it returns the bytes
// read.
func fetch(u string) (int64, error) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, fmt.Errorf("GET %s: %v after %d bytes", u, err, n)
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return n, nil
}

// writeReports writes runs reports into dir, each with links rows enough
// for a report.json of about mib MiB, and returns their run keys and the
// folder's size.
func writeReports(dir string, runs, mib int) ([]string, int64, error) {
	const rowBytes = 150 // one link row of report.json, indented
	rows := mib << 20 / rowBytes
	var keys []string
	for i := range runs {
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7*i)
		to := from.AddDate(0, 0, 6)
		w := reconcile.Window{From: reconcile.DateOf(from), To: reconcile.DateOf(to), Loc: time.UTC}
		r := report.Report{
			SchemaVersion: report.SchemaVersion,
			RunKey:        report.RunKey("bench", w, fmt.Sprintf("store %d", i%3)),
			WorkspaceID:   "bench",
			StoreID:       report.StoreID(fmt.Sprintf("store %d", i%3)),
			Window:        report.Window{From: w.From.String(), To: w.To.String(), TZ: "UTC"},
			GeneratedAt:   to.AddDate(0, 0, 1).Add(3 * time.Hour),
			Status:        report.StatusDiscrepancies,
			Drilldown:     report.Drilldown{Mode: report.DrillBreakdown},
		}
		keys = append(keys, r.RunKey)
		if _, err := os.Stat(filepath.Join(dir, r.RunKey, "report.json")); err == nil {
			continue // written by an earlier measurement: the same reports
		}
		for d := range 7 {
			api, local := int64(100_000), int64(100_000-rows/7)
			delta := local - api
			r.Days = append(r.Days, report.Day{Date: from.AddDate(0, 0, d).Format(time.DateOnly), Hours: 24,
				API: &api, Local: &local, Delta: &delta, Status: reconcile.Missing, Severity: reconcile.Fail, Settled: true})
		}
		r.Totals = report.Totals{API: 700_000, Local: 700_000 - int64(rows), Delta: -int64(rows)}
		r.Coverage = report.Coverage{Days: 7, Missing: 7}
		for n := range rows {
			r.Links = append(r.Links, report.Link{Date: from.AddDate(0, 0, n%7).Format(time.DateOnly),
				LinkID: fmt.Sprintf("lnk_%012d", n), API: 1, Local: 0, Delta: -1, Status: reconcile.Missing})
		}
		if _, err := storage.Write(dir, r); err != nil {
			return nil, 0, err
		}
	}
	var size int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return err
	})
	return keys, size, err
}
