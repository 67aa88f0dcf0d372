package job

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// Every row of the worse-trend word's decision: told once per change, once
// more marked when its answer was lost, passed once, never reminded.
func TestDecideWorse(t *testing.T) {
	open := history.Notice{Fingerprint: "outage", LastPosted: time.Now()}
	openLost := open
	openLost.Unconfirmed = 1
	openLostTwice := open
	openLostTwice.Unconfirmed = 2
	resolved := open
	resolved.Resolved = time.Now()
	resolvedLost := resolved
	resolvedLost.Unconfirmed = 1
	for _, tt := range []struct {
		name   string
		keys   string
		last   history.Notice
		had    bool
		action worseAction
		repeat bool
	}{
		{"nothing_worse_nothing_told", "", history.Notice{}, false, worseQuiet, false},
		{"worse_first_time", "outage", history.Notice{}, false, worseTell, false},
		{"worse_told_already", "outage", open, true, worseQuiet, false},
		{"worse_in_a_new_way", "loss_rate+outage", open, true, worseTell, false},
		{"worse_told_once_answer_lost", "outage", openLost, true, worseTell, true},
		{"worse_told_twice_answers_lost", "outage", openLostTwice, true, worseQuiet, false},
		{"passed", "", open, true, worsePassed, false},
		{"passed_of_a_word_never_confirmed", "", openLost, true, worsePassed, true},
		{"passed_told_already", "", resolved, true, worseQuiet, false},
		{"passed_told_once_answer_lost", "", resolvedLost, true, worsePassed, true},
		{"worse_again_after_it_passed", "outage", resolved, true, worseTell, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			action, repeat := decideWorse(tt.keys, tt.last, tt.had)
			if action != tt.action || repeat != tt.repeat {
				t.Errorf("decideWorse(%q) = %v, %v; want %v, %v", tt.keys, action, repeat, tt.action, tt.repeat)
			}
		})
	}
}

// Over 60 nights recorded in a real history and told through the real
// slack-go client, outages on three of seven nights are told once, the
// night the third is compared, and once that they passed, when the
// first leaves the last seven nights; the nights between say nothing
// more. With a webhook whose answer was lost, the word is told once more,
// marked as a possible repeat, and no more.
func TestWorseTrendToldOnceAndPassedOnce(t *testing.T) {
	for _, tt := range []struct {
		name     string
		tr       transport
		loseWord bool
	}{{"webhook", webhook, false}, {"bot", bot, false}, {"webhook_answer_lost", webhook, true}} {
		t.Run(tt.name, func(t *testing.T) {
			f, nt, _, _ := setupSlack(t, tt.tr, func(c *alert.Config) {})
			if tt.loseWord {
				nt2, err := alert.New(tt.tr.cfg(f), alert.WithCallTimeout(300*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				nt = nt2
			}
			h := newHistory(t)
			ctx := context.Background()
			loc, _ := time.LoadLocation("Europe/Warsaw")
			start, _ := reconcile.ParseDate("2026-09-01")
			outage := map[int]bool{40: true, 42: true, 45: true}
			var worse, passed []int
			for n := range 60 {
				day := start.AddDays(n)
				now := day.AddDays(1).Start(loc).Add(3 * time.Hour)
				tl := teller{slack: nt, history: h, guard: func(context.Context) error { return nil },
					now: func() time.Time { return now }, log: slog.New(slog.DiscardHandler)}
				api, local := int64(1000), int64(1000)
				d := report.Day{Date: day.String(), Hours: 24, API: &api, Local: &local, Status: reconcile.Match, Settled: true}
				rep := report.Report{SchemaVersion: report.SchemaVersion, RunKey: report.RunKey("48213", reconcile.Window{From: day, To: day, Loc: loc}, "s"),
					WorkspaceID: "48213", StoreID: "st_1", Window: report.Window{From: day.String(), To: day.String(), TZ: loc.String()},
					GeneratedAt: now, Status: report.StatusOK, Days: []report.Day{d}}
				if outage[n] {
					lost := int64(60)
					rep.Days[0].Local, rep.Days[0].Status = &lost, reconcile.Missing
					*rep.Days[0].Local = api - 60
					rep.Diagnoses = []report.Diagnosis{{Date: day.String(), Kind: reconcile.DiagOutage, Clicks: 60}}
				}
				if err := h.RecordRun(ctx, rep); err != nil {
					t.Fatal(err)
				}
				before := len(f.Posts())
				if tt.loseWord && n == 45 {
					next := len(f.Posts())
					f.SetHook(func(i int) bool { return i == next })
				}
				_, _ = tl.tellWorse(ctx, rep, "")
				f.SetHook(nil)
				for _, p := range f.Posts()[before:] {
					switch {
					case strings.Contains(p.Text, "no longer getting worse"):
						passed = append(passed, n)
					case strings.Contains(p.Text, "getting worse"):
						worse = append(worse, n)
						if n == 46 && tt.loseWord && !strings.Contains(p.Body, "repeat") {
							t.Errorf("night 46 re-tells a word whose answer was lost without marking it: %s", p.Text)
						}
					}
				}
			}
			wantWorse := []int{45}
			if tt.loseWord {
				wantWorse = []int{45, 46}
			}
			if !slices.Equal(worse, wantWorse) || !slices.Equal(passed, []int{47}) {
				t.Errorf("told worse on nights %v and passed on %v; want %v and [47]", worse, passed, wantWorse)
			}
		})
	}
}
