package storage

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// The probe writes a marker of its own and removes it, and removes the
// folders it had to make for it: what was there before stays, what was
// not is gone.
func TestProbeLeavesTheFolderAsItFoundIt(t *testing.T) {
	root := t.TempDir()
	theirs := filepath.Join(root, "reports", "someone-elses.txt")
	if err := os.MkdirAll(filepath.Dir(theirs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(theirs, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := openDest(t, filepath.Join(root, "reports")).Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := names(t, filepath.Join(root, "reports")); len(got) != 1 || got[0] != "someone-elses.txt" {
		t.Errorf("the folder holds %v after the probe, want what it held", got)
	}
	// A folder that does not exist yet: made for the marker, then removed.
	if err := openDest(t, filepath.Join(root, "new", "reports")).Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folders made for the marker are still there: %v", err)
	}
}

// A folder that cannot be written, and a bucket that refuses (403), are
// ErrUnwritable: only the configuration can mend them. A bucket's answer
// lost is not: a retry may pass. A marker the probe could not remove is
// named, to delete by hand.
func TestProbeRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := openDest(t, filepath.Join(file, "reports")).Probe(context.Background())
	if !errors.Is(err, ErrUnwritable) {
		t.Errorf("a folder under a file: %v, want ErrUnwritable", err)
	}

	s := newS3(t)
	s.mu.Lock()
	s.beforePut = func(w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>denied</Message></Error>`))
		return true
	}
	s.mu.Unlock()
	err = openDest(t, s.dest("r")).Probe(context.Background())
	if !errors.Is(err, ErrUnwritable) {
		t.Errorf("a bucket answering 403: %v, want ErrUnwritable", err)
	}

	// Written, and the answer lost: not the configuration's fault.
	s.mu.Lock()
	s.beforePut = func(w http.ResponseWriter, r *http.Request) bool {
		s.fake.ServeHTTP(httptest.NewRecorder(), r) // stored...
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close() // ...and the answer lost
		}
		return true
	}
	s.mu.Unlock()
	err = openDest(t, s.dest("lost")).Probe(context.Background())
	if err == nil || errors.Is(err, ErrUnwritable) {
		t.Errorf("a PUT whose answer is lost: %v, want an error a retry may mend", err)
	}
}

// A bucket that redirects to another origin: nothing reaches it, and the
// probe fails.
func TestProbeRedirectToAnotherOrigin(t *testing.T) {
	dest, reached := redirectingS3(t)
	err := openDest(t, dest("r")).Probe(context.Background())
	if !errors.Is(err, safehttp.ErrRedirect) || !errors.Is(err, ErrUnwritable) {
		t.Errorf("error %v, want ErrRedirect and ErrUnwritable", err)
	}
	if got := reached(); len(got) != 0 {
		t.Errorf("the other origin got %d requests", len(got))
	}
}

// Probes at once, and beside a run's write, each use a marker of their
// own: every one passes, and the bucket ends holding the report alone.
func TestProbeConcurrent(t *testing.T) {
	s := newS3(t)
	d := openDest(t, s.dest("r"))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- d.Probe(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs <- d.Write(ctx, "key", files("v1", "report.json", "days.csv"))
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	it := d.bucket.List("", "")
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			break
		}
		if strings.Contains(obj.Key, markerPrefix) {
			t.Errorf("a marker is left behind: %s", obj.Key)
		}
	}
	if got := objectsUnder(t, d, "key"); len(got) != 2 {
		t.Errorf("the run's folder holds %d objects, want its 2 files", len(got))
	}
}

// Probes at once of folders under one parent that is not there yet (the
// workspaces of a fleet, under RECON_REPORT_DIR/<name>) all pass, and
// leave no folder behind.
func TestProbeFoldersUnderOneNewParent(t *testing.T) {
	root := t.TempDir()
	parent := filepath.Join(root, "reports")
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := openDest(t, filepath.Join(parent, "ws"+strconv.Itoa(i)))
				errs <- d.Probe(context.Background())
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if _, err := os.Stat(parent); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("round %d: %s is left behind (%v)", round, parent, err)
		}
	}
}

// A marker left behind by a probe that died midway is no report: the
// viewer's list of runs does not show it, and pruning neither fails on it
// nor takes anything else with it.
func TestProbeMarkerLeftBehindIsNoReport(t *testing.T) {
	dir := t.TempDir()
	d := openDest(t, dir)
	ctx := context.Background()
	if err := d.Write(ctx, "20261024_20261026_156b86900e9c", files("v1", "report.json", "days.csv")); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, markerPrefix+"0123456789abcdef01234567")
	if err := os.WriteFile(marker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	runs, err := d.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if strings.Contains(r.Key, markerPrefix) {
			t.Errorf("the viewer lists the marker as run %q", r.Key)
		}
	}
	if _, err := d.Prune(time.Now().Add(1000*24*time.Hour), 24*time.Hour, ""); err != nil {
		t.Fatalf("prune beside a marker: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("prune removed the marker, which is no run folder: %v", err)
	}
}

// Another process making and removing the same new parent folder while a
// probe makes its own under it (the pods of a fleet, each probing
// RECON_REPORT_DIR/<name> under a parent none of them found) never makes
// the probe fail: a folder made meanwhile is taken as there, one removed
// meanwhile is made again.
func TestMkdirsBesideAnotherProcess(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "reports")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the other pod: its own folder made and removed, again and again
		defer close(done)
		other := filepath.Join(parent, "other")
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Mkdir(parent, 0o755)
			os.Mkdir(other, 0o755)
			os.Remove(other)
			os.Remove(parent)
		}
	}()
	for i := range 500 {
		mine := filepath.Join(parent, "acme")
		made, err := mkdirs(mine)
		if err != nil {
			close(stop)
			<-done
			t.Fatalf("attempt %d: %v", i, err)
		}
		for j := len(made) - 1; j >= 0; j-- {
			os.Remove(made[j])
		}
	}
	close(stop)
	<-done
}
