package sim

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/alert/slacktest"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// nightResult is what a night did, as the checks see it.
type nightResult struct {
	n      int
	date   reconcile.Date
	window reconcile.Window
	snap   snapshot
	fault  fault
	struck bool
	killed bool
	code   int
	repair bool
	out    job.Outcome
}

// told is what the channel says of a day now.
type told struct {
	alerted             bool // a gap, told and not healed since
	status              string
	api, local          int64
	repeats             map[string]int // a webhook's possible repeats, per state
	lastAlert, lastHeal int            // the nights they were told
	// alertedOn is the night the channel began to show the day as a gap:
	// first, or again after it showed it healed
	alertedOn int
	// diedHeals counts the webhook posts telling the day healed that died
	// at the gate before they left, since the channel last showed it as a
	// gap: the run marked them sent, and two such are taken as told.
	diedHeals int
	// diedGaps counts, per state ("status api local"), the webhook posts
	// telling the day as a gap so that died at the gate before they left.
	diedGaps map[string]int
	// by is the order (in the channel) of the message whose word on the
	// day stands: a reader goes by the newest message that speaks of a
	// day, and an edit of an older one does not take its word back.
	by int
}

// channel is what Slack was told, read back from the fake's posts.
type channel struct {
	days     map[string]*told
	standing []string // the causes of the notice that stands ("" when none)
	noticeAt int
	// repeated: a webhook's marked repeat of the last recovery was seen
	repeated bool
	// worse holds what the worse-trend word that stands said, one
	// sentence a way the nights got worse (nil: none stands);
	// worseRepeated says a webhook's marked repeat of it, or of its
	// passing, was seen.
	worse         map[string]bool
	worseRepeated bool
}

func newChannel() *channel { return &channel{days: map[string]*told{}} }

func (c *channel) day(d string) *told {
	if c.days[d] == nil {
		c.days[d] = &told{repeats: map[string]int{}}
	}
	return c.days[d]
}

var (
	numRe    = `([+\-−]?[\d,]+)`
	gapRe    = regexp.MustCompile(`• \*(\d{4}-\d\d-\d\d)\* (missing|surplus) \*` + numRe + `\* \(Elido ` + numRe + ` · store ` + numRe + `\)`)
	healRe   = regexp.MustCompile(`• ✅ \*(\d{4}-\d\d-\d\d)\* healed(?:: \w+ now \(Elido ` + numRe + ` · store ` + numRe + `\))?`)
	changeRe = regexp.MustCompile(`• 🔄 \*(\d{4}-\d\d-\d\d)\* (missing|surplus) \*` + numRe + `\* now \(Elido ` + numRe + ` · store ` + numRe + `\)`)
	stillRe  = regexp.MustCompile(`• 🔴 \*(\d{4}-\d\d-\d\d)\* still (missing|surplus) \*` + numRe + `\* \(Elido ` + numRe + ` · store ` + numRe + `\)`)
	runRe    = regexp.MustCompile("[Rr]un `([^`]+)`")
	// a notice's cause: what failed, and what to do (a new cause of the
	// same part, a revoked key after a 500, is told at once)
	whyRe = regexp.MustCompile(`• \*([^*]+)\*: [^\n]*\n\s*→ ([^\n]*)`)
)

func num(s string) int64 {
	s = strings.NewReplacer(",", "", "−", "-", "+", "").Replace(s)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// texts gathers every text of a message's blocks, in order.
func texts(raw []json.RawMessage) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["text"].(string); ok {
				b.WriteString(s)
				b.WriteByte('\n')
			}
			for k, x := range v {
				if k != "text" {
					walk(x)
				} else if _, ok := x.(string); !ok {
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, r := range raw {
		var v any
		if json.Unmarshal(r, &v) == nil {
			walk(v)
		}
	}
	return b.String()
}

// message is one post as the checks read it.
type message struct {
	kind   string // alert, update, notice, reminder, recovery, worse, passed, other
	text   string
	order  int // the message's place in the channel (the post's, for an edit)
	runKey string
	repeat bool
}

func readMessage(p slacktest.Post) message {
	all := texts(p.Blocks)
	if all == "" {
		all = p.Text
	}
	// A fleet's messages name their workspace first: the context block
	// "Fleet workspace *name*", or "[name] " before the text.
	if rest, ok := strings.CutPrefix(all, "Fleet workspace "); ok {
		_, all, _ = strings.Cut(rest, "\n")
	} else if strings.HasPrefix(all, "[") {
		if _, rest, ok := strings.Cut(all, "] "); ok {
			all = rest
		}
	}
	m := message{text: all, kind: "other", repeat: strings.Contains(all, "Possible repeat")}
	if r := runRe.FindStringSubmatch(all); r != nil {
		m.runKey = r[1]
	}
	head, rest, _ := strings.Cut(all, "\n")
	if m.repeat && strings.Contains(head, "Possible repeat") {
		head, _, _ = strings.Cut(rest, "\n") // the title follows the repeat's note
	}
	switch {
	case strings.Contains(head, "no longer getting worse"):
		m.kind = "passed"
	case strings.Contains(head, "getting worse in workspace"):
		m.kind = "worse"
		m.text = p.Text // its ways, as one line: "…: way; way"
	case strings.Contains(head, "Updated: click gaps"), strings.Contains(head, "Healed: click gaps"):
		m.kind = "update"
	case strings.Contains(head, "Click gaps in workspace"), strings.Contains(head, "No click gaps"), strings.Contains(head, "not fully verified"):
		m.kind = "alert"
	case strings.Contains(head, "Checking again"), strings.Contains(head, "Reports stored again"):
		m.kind = "recovery"
	case strings.HasPrefix(head, "⏰"):
		m.kind = "reminder"
	case strings.Contains(head, "clickrecon could not"), strings.Contains(head, "⚠️ clickrecon"):
		m.kind = "notice"
	}
	return m
}

// mine returns the posts of the simulation's workspace: in a fleet's
// channel, those whose text names it first.
func (s *sim) mine(posts []slacktest.Post) []slacktest.Post {
	if s.c.fleet == "" {
		return posts
	}
	var out []slacktest.Post
	for _, p := range posts {
		if strings.HasPrefix(p.Text, "["+s.c.fleet+"] ") {
			out = append(out, p)
		}
	}
	return out
}

// violation fails the simulation with the seed, the night and the
// command that replays it.
func (s *sim) violation(n int, kind, format string, args ...any) {
	stats.Lock()
	stats.violations[kind]++
	stats.Unlock()
	who := ""
	if s.c.fleet != "" {
		who = ", fleet workspace " + s.c.fleet
	}
	s.t.Errorf("seed %d night %d (%s, %s%s): %s: %s\n  replay: %s", s.c.seed, n, s.c.slack, s.c.db, who, kind,
		fmt.Sprintf(format, args...), s.c.replay(n))
}

// check is every invariant, after night r.
func (s *sim) check(r nightResult) {
	n := r.n
	after := s.snapshot(r.window, s.clock.Now(), r.window.From.AddDays(-40))

	// (7) The exit code is the night's.
	if !r.killed {
		want := []int{0}
		if gaps(r.snap) {
			want = []int{1}
		}
		if r.repair {
			want = []int{0, 1}
		}
		if r.struck && r.fault.codes != nil {
			want = r.fault.codes
		}
		if !slices.Contains(want, r.code) {
			s.violation(n, "exit code", "exit %d, want one of %v (fault %q)", r.code, want, r.fault.name)
		}
	}

	// (1), (2): what Slack was told this night.
	posts := s.mine(s.slack.Posts())
	heard := false
	for i, p := range posts[s.seen:] {
		m := readMessage(p)
		m.order = s.seen + i + 1
		s.order[p.TS] = m.order
		if *flagVerb {
			s.t.Logf("  %snight %d posted %s: %s", s.who(), n, m.kind, m.text)
		}
		switch m.kind {
		case "alert":
			s.alerted(n, m)
			if strings.Contains(m.text, "could not be stored") {
				heard = true
			}
		case "update":
			s.updated(n, m, true)
		case "notice", "reminder":
			heard = true
			causes := whyRe.FindAllStringSubmatch(m.text, -1)
			var cs []string
			for _, c := range causes {
				cs = append(cs, c[1]+" → "+c[2])
			}
			slices.Sort(cs)
			if m.kind == "notice" && s.tell.standing != nil && slices.Equal(cs, s.tell.standing) && s.historyWorks(r) && !(m.repeat && s.c.slack == "webhook") {
				s.violation(n, "notice told twice", "the notice of %v was posted again with no recovery between:\n%s", cs, m.text)
			}
			s.tell.standing, s.tell.noticeAt, s.tell.repeated = cs, n, false
			if cs == nil {
				s.tell.standing = []string{}
			}
		case "worse", "passed":
			s.toldWorse(n, m)
		case "recovery":
			if s.tell.standing == nil && m.repeat && s.c.slack == "webhook" && !s.tell.repeated {
				s.tell.repeated = true // a webhook's one marked repeat of a recovery never confirmed
				break
			}
			if s.tell.standing == nil {
				s.violation(n, "recovery told twice", "a recovery with no notice standing:\n%s", m.text)
			}
			s.tell.standing = nil
		}
	}
	s.seen = len(posts)
	ups := s.mine(s.slack.Updates())
	for _, u := range ups[s.seenUp:] {
		m := readMessage(slacktest.Post{Text: u.Text, Blocks: formBlocks(u.Body)})
		m.order = s.order[u.TS]
		if *flagVerb {
			head, _, _ := strings.Cut(m.text, "\n")
			s.t.Logf("  %snight %d edited %s: %s", s.who(), n, m.kind, head)
		}
		s.updated(n, m, false)
	}
	s.seenUp = len(ups)
	for _, b := range s.gate.unsentSince(&s.seenUnsent) {
		if s.c.fleet != "" && !strings.Contains(b, "["+s.c.fleet+"] ") {
			continue
		}
		for _, h := range healRe.FindAllStringSubmatch(b, -1) {
			tl := s.tell.day(h[1])
			tl.diedHeals++
			tl.diedGaps = nil // a heal told, shown or not: a gap after it is new
		}
		for _, re := range []*regexp.Regexp{gapRe, stillRe, changeRe} {
			for _, g := range re.FindAllStringSubmatch(b, -1) {
				tl := s.tell.day(g[1])
				if tl.diedGaps == nil {
					tl.diedGaps = map[string]int{}
				}
				tl.diedGaps[state(g[2], num(g[4]), num(g[5]))]++
			}
		}
	}

	// (3) No silent night: a night that could not check is heard, unless
	// a notice of it stands or Slack itself was what failed.
	if !r.killed && (r.code == job.ExitUsage || r.code == job.ExitIncomplete) && !(r.struck && r.fault.slackDown) {
		if !heard && s.tell.standing == nil {
			s.violation(n, "silent night", "exit %d (fault %q, struck %v) and Slack heard nothing, with no notice standing", r.code, r.fault.name, r.struck)
		}
	}

	// (4) After a clean night every settled gap of the window is told as
	// it is, and every alerted day that matches is told healed.
	if !r.struck && !r.killed && r.code != job.ExitIncomplete {
		for _, d := range r.window.Days() {
			status, api, local, isGap := r.snap.gap(d)
			st2, api2, local2, isGap2 := after.gap(d)
			tl := s.tell.day(d.String())
			switch {
			case isGap || (r.repair && isGap2):
				ok := tl.alerted && tl.status == status && tl.api == api && tl.local == local
				ok = ok || (r.repair && (tl.alerted && tl.status == st2 && tl.api == api2 && tl.local == local2 || !isGap2 && !tl.alerted))
				if !ok && s.c.slack == "webhook" && tl.diedGaps[state(status, api, local)] >= 2 {
					// Told twice by posts marked sent that died before they
					// left: a webhook cannot tell them from posts whose
					// answer was lost, and takes the gap as told.
					ok = true
					countEvent("webhook: a gap whose two posts died before they left, taken as told")
				}
				if !ok {
					s.violation(n, "gap not told", "after a clean night %s is %s (Elido %d · store %d) but the channel says %s",
						d, status, api, local, tl)
				}
			case tl.alerted && s.c.slack == "webhook" && tl.diedHeals >= 2:
				// Told healed twice by posts marked sent that died before
				// they left: a webhook cannot tell them from posts whose
				// answer was lost, and takes the heal as told.
				countEvent("webhook: a heal whose two posts died before they left, taken as told")
			case tl.alerted:
				s.violation(n, "heal not told", "after a clean night %s matches (%d) but the channel still shows it %s", d, api, tl)
			}
		}
	}

	// (5) A click is never written twice, nor from nowhere, nor deleted;
	// a clean repair night leaves the days it repaired matching.
	from, to := s.world.dayStart(r.window.From.AddDays(-40)), s.world.dayStart(r.window.To.AddDays(1))
	ek := s.world.elidoKeys(from, to)
	// The receiver wrote nothing during the night: what the store gained
	// since the night began, clickrecon inserted. It may insert a click
	// once, and only one Elido counted and the store lacked.
	for k, got := range after.keys {
		before := r.snap.keys[k]
		if got > before && (before > 0 || !ek[k] || got-before > 1) {
			s.violation(n, "click written twice", "%s is in the store %d times, %d before the night; Elido has it: %v", k, got, before, ek[k])
		}
	}
	for k, before := range r.snap.keys {
		if after.keys[k] < before {
			s.violation(n, "click deleted", "%s is in the store %d times, %d before the night", k, after.keys[k], before)
		}
	}
	if r.repair && !r.struck && !r.killed {
		vis := s.world.visible(s.clock.Now(), from)
		for _, d := range r.window.Days() {
			if after.local[d] == r.snap.local[d] {
				continue // not repaired
			}
			for _, c := range vis {
				k := click{ts: c.TS, link: c.LinkID, country: c.CountryCode}.key()
				if s.dayOf(c.TS) != d || after.keys[k] > 0 {
					continue
				}
				if s.countless(c, vis, after.keys) {
					// Beside a row Elido does not count of its own hour,
					// link and country: no count shows it lost, and the
					// repair says it finds only what a count shows.
					countEvent("repair: a lost click no count shows (a row Elido does not count beside it)")
					continue
				}
				s.violation(n, "repaired day still differs", "%s was repaired on a clean night but %s is still missing", d, k)
				break
			}
		}
	}

	// (6) Nothing written outside clickrecon's own tables, folders and
	// objects.
	// (A fleet's workspaces share the history: each leaves its run
	// lock's file beside a SQLite one, all named alike here.)
	if got := slices.Compact(s.obs.tables(s.t)); !slices.Equal(got, s.rows) && !slices.Equal(got, withLock(s.rows)) {
		s.violation(n, "written outside its own", "the databases hold %v, want %v", got, s.rows)
	}
	if out := objectsOutside(s.s3objs()); len(out) > 0 {
		s.violation(n, "written outside its own", "objects outside the reports' prefix: %v", out)
	}
	if fs := filesIn(cwd); len(fs) > 0 {
		s.violation(n, "written outside its own", "files in the working folder: %v", fs)
	}
}

// historyWorks says the night's history was there: a history that cannot
// be opened posts its notice every run, as documented.
func (s *sim) historyWorks(r nightResult) bool {
	return !(r.struck && strings.HasPrefix(r.fault.name, "history gone"))
}

// withLock is rows with the run lock's file beside a SQLite history.
func withLock(rows []string) []string {
	out := append([]string{"history file history.db.lock-*"}, rows...)
	slices.Sort(out)
	return out
}

func gaps(sn snapshot) bool {
	for _, d := range sn.days {
		if _, _, _, g := sn.gap(d); g {
			return true
		}
	}
	return false
}

func (t *told) String() string {
	if t.alerted {
		return fmt.Sprintf("%s (Elido %d · store %d), told night %d", t.status, t.api, t.local, t.lastAlert)
	}
	if t.lastHeal > 0 {
		return fmt.Sprintf("healed on night %d", t.lastHeal)
	}
	return "nothing"
}

// alerted reads a new alert: each gap it names was true on the night of
// its run, with its numbers, and is not one the channel already shows.
func (s *sim) alerted(n int, m message) {
	night, known := s.runs[m.runKey]
	type line struct {
		d, status, state string
		api, local       int64
	}
	var lines []line
	fresh := false
	for _, g := range gapRe.FindAllStringSubmatch(m.text, -1) {
		l := line{d: g[1], status: g[2], api: num(g[4]), local: num(g[5])}
		l.state = state(l.status, l.api, l.local)
		s.trueGap(n, night, known, l.d, l.status, l.api, l.local, m)
		tl := s.tell.day(l.d)
		if !(tl.alerted && tl.status == l.status && tl.api == l.api && tl.local == l.local) {
			fresh = true
		}
		lines = append(lines, l)
	}
	// A day shown "still … as alerted" must be one the channel shows so:
	// one never told would be a gap never alerted.
	for _, g := range stillRe.FindAllStringSubmatch(m.text, -1) {
		d, status, api, local := g[1], g[2], num(g[4]), num(g[5])
		s.trueGap(n, night, known, d, status, api, local, m)
		tl := s.tell.day(d)
		switch {
		case tl.alerted && tl.status == status && tl.api == api && tl.local == local:
		case s.c.slack == "webhook" && s.gate.neverLeft(d):
			// Posts of the day that were marked sent and died before they
			// left count as told without an answer (a webhook cannot tell
			// them from posts whose answer was lost); told twice so, the
			// day is listed as alerted, with its numbers: the channel
			// shows it now.
			countEvent("webhook: a day listed \"as alerted\" whose posts died before they left")
		default:
			s.violation(n, "gap never alerted", "%s shown as %s (Elido %d · store %d) \"as alerted\", but the channel shows %s", d, status, api, local, tl)
		}
		tl.alerted, tl.status, tl.api, tl.local, tl.by = true, status, api, local, m.order
	}
	// A new alert shows the window's gaps as they stand, those alerted
	// before among them: it tells a gap twice when it tells nothing new.
	for _, l := range lines {
		tl := s.tell.day(l.d)
		if m.repeat {
			if s.c.slack == "bot" {
				s.violation(n, "gap alerted twice", "a bot token's post marked as a possible repeat: %s %s", l.d, l.state)
			}
			// A marked post is a repeat of what the channel already shows;
			// one whose earlier post never left (killed before it) is the
			// state's first appearance, however it is marked: the webhook's
			// rule is one appearance, and at most one more, marked.
			if tl.alerted && tl.status == l.status && tl.api == l.api && tl.local == l.local {
				tl.repeats[l.state]++
			}
			if tl.repeats[l.state] > 1 {
				s.violation(n, "gap alerted twice", "%s %s posted as a possible repeat %d times", l.d, l.state, tl.repeats[l.state])
			}
		} else if !fresh {
			s.violation(n, "gap alerted twice", "%s %s alerted again (first told on night %d) in an alert with no new gap, unmarked:\n%s", l.d, l.state, tl.lastAlert, m.text)
		}
		if !tl.alerted {
			tl.alertedOn = n
		}
		if !(tl.alerted && tl.status == l.status && tl.api == l.api && tl.local == l.local) {
			tl.lastAlert = n
			delete(tl.repeats, "healed") // a new gap: its heal may be repeated once, marked
			tl.diedHeals = 0
		}
		tl.alerted, tl.status, tl.api, tl.local, tl.by = true, l.status, l.api, l.local, m.order
	}
	s.updated(n, m, true)
}

// trueGap checks a gap's numbers against the model on the night its run
// read them.
func (s *sim) trueGap(n, night int, known bool, d, status string, api, local int64, m message) {
	if !known {
		s.violation(n, "false gap", "a post of a run the simulation never ran (%q):\n%s", m.runKey, m.text)
		return
	}
	date, _ := reconcile.ParseDate(d)
	snap := s.snaps[night]
	st, a, l, _ := snap.gap(date)
	if st != status || a != api || l != local {
		s.violation(n, "false gap", "%s told %s (Elido %d · store %d); on night %d it was %s (Elido %d · store %d)",
			d, status, api, local, night, st, a, l)
	}
}

// updated reads the heals and changes a message tells (a new message
// when post is set, else an edit of an earlier one).
func (s *sim) updated(n int, m message, post bool) {
	night, known := s.runs[m.runKey]
	for _, h := range healRe.FindAllStringSubmatch(m.text, -1) {
		tl := s.tell.day(h[1])
		if !post && tl.by > m.order {
			continue // a newer message speaks of the day
		}
		if post {
			// A heal is told once; a webhook's may come once more,
			// marked. Its first telling may be of a gap the channel never
			// showed: the gap's post was marked sent and the run died
			// before the post left, which a webhook cannot tell from a
			// post that arrived (marked as a possible repeat, then).
			heals := tl.repeats["healed"] + 1
			switch {
			case tl.alerted && heals == 1:
			case s.c.slack == "webhook" && m.repeat && heals <= 2:
			default:
				s.violation(n, "heal told twice", "%s told healed (%d times since its gap was shown), but the channel did not show it as a gap (%s):\n%s", h[1], heals, tl, m.text)
			}
			tl.repeats["healed"] = heals
		}
		if post && h[2] != "" && known {
			date, _ := reconcile.ParseDate(h[1])
			if sn := s.snaps[night]; sn.api[date] != num(h[2]) || sn.local[date] != num(h[3]) {
				s.violation(n, "false heal", "%s told healed at Elido %s · store %s; on night %d: Elido %d · store %d", h[1], h[2], h[3], night, sn.api[date], sn.local[date])
			}
		}
		if tl.alerted {
			tl.lastHeal = n
		}
		tl.alerted, tl.by, tl.diedGaps = false, max(tl.by, m.order), nil
	}
	for _, c := range changeRe.FindAllStringSubmatch(m.text, -1) {
		d, status, api, local := c[1], c[2], num(c[4]), num(c[5])
		if post {
			s.trueGap(n, night, known, d, status, api, local, m)
		}
		tl := s.tell.day(d)
		if !post && tl.by > m.order {
			continue // a newer message speaks of the day
		}
		if !(tl.alerted && tl.status == status && tl.api == api && tl.local == local) {
			delete(tl.repeats, "healed") // a gap shown again: its heal may be told again
			tl.diedHeals = 0
		}
		tl.alerted, tl.status, tl.api, tl.local, tl.by = true, status, api, local, max(tl.by, m.order)
	}
}

// state names a day's state as told, its status and numbers: "status
// api local".
func state(status string, api, local int64) string {
	return fmt.Sprintf("%s %d %d", status, api, local)
}

// countless says whether the store's rows of c's hour, link and country
// number as many as Elido's clicks of them (vis) do, though c is not
// among the rows (keys): no count tells c lost.
func (s *sim) countless(c elidotest.Click, vis []elidotest.Click, keys map[string]int) bool {
	type cell struct {
		hour          time.Time
		link, country string
	}
	at := func(ts time.Time, link, country string) cell {
		l := ts.In(s.world.loc)
		return cell{time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), 0, 0, 0, s.world.loc), link, country}
	}
	want := at(c.TS, c.LinkID, c.CountryCode)
	var api, local int
	for _, v := range vis {
		if at(v.TS, v.LinkID, v.CountryCode) == want {
			api++
		}
	}
	for k, n := range keys {
		parts := strings.SplitN(k, "|", 3)
		ts, err := time.Parse(time.RFC3339, parts[0])
		if err == nil && len(parts) == 3 && at(ts, parts[1], parts[2]) == want {
			local += n
		}
	}
	return api == local
}

// formBlocks are the blocks of a chat.update's form.
func formBlocks(body string) []json.RawMessage {
	v, err := url.ParseQuery(body)
	if err != nil {
		return nil
	}
	var bs []json.RawMessage
	json.Unmarshal([]byte(v.Get("blocks")), &bs)
	return bs
}

var _ = time.Second

// toldWorse checks the worse-trend word: a change is told once (a new
// word while one stands must say a way not told yet), and its passing
// once, after it; a webhook's post whose answer was lost may come once
// more, marked as a possible repeat.
func (s *sim) toldWorse(n int, m message) {
	repeat := m.repeat && s.c.slack == "webhook" && !s.tell.worseRepeated
	if m.kind == "passed" {
		switch {
		case s.tell.worse != nil:
			s.tell.worse, s.tell.worseRepeated = nil, false
		case repeat:
			s.tell.worseRepeated = true
		default:
			s.violation(n, "worse passed twice", "the worse-trend word's passing, with no word standing:\n%s", m.text)
		}
		return
	}
	_, says, _ := strings.Cut(m.text, "getting worse in workspace ")
	_, says, _ = strings.Cut(says, ": ")
	ways := strings.Split(says, "; ")
	fresh := s.tell.worse == nil
	for _, w := range ways {
		fresh = fresh || !s.tell.worse[w]
	}
	switch {
	case fresh:
		if s.tell.worse == nil {
			s.tell.worse = map[string]bool{}
		}
		for _, w := range ways {
			s.tell.worse[w] = true
		}
		s.tell.worseRepeated = false
	case repeat:
		s.tell.worseRepeated = true
	default:
		s.violation(n, "worse told twice", "the worse-trend word was posted again, saying nothing new:\n%s", m.text)
	}
	countEvent("worse-trend word (or its repeat)")
}
