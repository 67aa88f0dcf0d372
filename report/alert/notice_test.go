package alert

import (
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/golden"
)

var (
	keyRevoked = Cause{Key: "elido:http_401", What: "Elido's daily counts",
		Why: `elido: GET timeseries 2026-11-24..2026-11-26: HTTP 401 unauthorized: "API key revoked": the API key is missing, revoked or expired: check ELIDO_API_KEY`,
		Do:  "fix ELIDO_API_KEY (or its Secret); the next run checks these days again"}
	storeDown = Cause{Key: "store:unavailable", What: "the store's daily counts",
		Why: "open store postgres://recon@db:5432/clicks: dial tcp 10.0.0.7:5432: connect: connection refused",
		Do:  "check that the store is up and reachable at STORE_DSN; the CronJob retries, and the next run checks these days again"}
)

func TestRenderNoticeGolden(t *testing.T) {
	t.Parallel()
	rep := newReport(unverifiable("2026-11-24", 800), unverifiable("2026-11-25", 810), unverifiable("2026-11-26", 790))
	rep.Status = "incomplete"
	first := time.Date(2026, 11, 20, 3, 0, 9, 0, time.UTC)
	tests := []struct {
		name string
		msg  Message
	}{
		{"notice_key_revoked", RenderNotice(rep, []Cause{keyRevoked}, NoticeOf{Action: NoticePost})},
		{"notice_reminder_linked", RenderNotice(linked(rep), []Cause{keyRevoked, storeDown}, NoticeOf{Action: NoticeRemind, First: first})},
		{"notice_history_down", RenderNotice(rep, []Cause{{Key: "history:unavailable", What: "the run history",
			Why: "open history postgres://recon@db/history: connection refused", Do: "check HISTORY_DSN"}}, NoticeOf{Action: NoticeEveryRun})},
		{"recovered", RenderRecovered(newReport(day("2026-11-24", 800, 800, "match", "ok")), NoticeReason([]Cause{keyRevoked}), first, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLimits(t, messageJSON(t, tt.msg))
			golden.Check(t, tt.name+".json.golden", messageJSON(t, tt.msg))
			golden.Check(t, tt.name+".md.golden", []byte(RenderMarkdown(tt.msg)))
		})
	}
	// The reason and what to do are in the text a notification shows.
	text := RenderNotice(rep, []Cause{keyRevoked}, NoticeOf{Action: NoticePost}).Text
	for _, s := range []string{"401", "check ELIDO_API_KEY", "2026-11-24 to 2026-11-26"} {
		if !strings.Contains(text, s) {
			t.Errorf("the notice's text lacks %q: %s", s, text)
		}
	}
}

// A reason that carries markup, a mention or a huge body stays inert and
// within Slack's limits.
func TestRenderNoticeKeepsReasonsInert(t *testing.T) {
	t.Parallel()
	rep := newReport(unverifiable("2026-11-24", 800))
	c := Cause{Key: "elido:http_500", What: "Elido's daily counts", Why: "<!here> `boom`\n" + strings.Repeat("x", 5000), Do: "wait"}
	m := RenderNotice(rep, []Cause{c, c, c, c, c, c, c}, NoticeOf{Action: NoticePost})
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	b := messageJSON(t, m)
	checkLimits(t, b)
	if strings.Contains(string(b), "<!here>") {
		t.Error("the reason's mention reached the message")
	}
}

// A notice whose one cause is the report's storage says so, not that the
// run could not check; so does the message when reports are stored again.
func TestRenderNoticeOfTheReportAlone(t *testing.T) {
	t.Parallel()
	rep := newReport(day("2026-11-24", 800, 800, "match", "ok"))
	unstored := Cause{Key: CauseReportUnstored, What: "the report (it was not stored)", Why: "mkdir /reports: read-only file system", Do: "check RECON_REPORT_DIR"}
	for _, m := range []Message{
		RenderNotice(rep, []Cause{unstored}, NoticeOf{Action: NoticePost}),
		RenderNotice(rep, []Cause{unstored}, NoticeOf{Action: NoticeRemind}),
		RenderRecovered(rep, NoticeReason([]Cause{unstored}), time.Time{}, true),
	} {
		md := RenderMarkdown(m)
		if strings.Contains(md, "could not check") || strings.Contains(md, "not checking") || strings.Contains(md, "Checking again") {
			t.Errorf("a message of the report's storage alone says the run did not check:\n%s", md)
		}
		if !strings.Contains(md, "report") || !strings.Contains(m.Text, "report") {
			t.Errorf("the message does not name the report:\n%s", md)
		}
	}
	if md := RenderMarkdown(RenderNotice(rep, []Cause{unstored, keyRevoked}, NoticeOf{Action: NoticePost})); !strings.Contains(md, "could not check") {
		t.Errorf("a notice with a cause that kept the run from checking does not say so:\n%s", md)
	}
}
