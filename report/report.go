// Package report turns a reconciliation result into the files operators
// read and scripts parse: report.json (schema version 1), days.csv,
// links.csv, countries.csv, hours.csv, report.md and report.html. Its
// subpackages keep them (storage: written to RECON_REPORT_DIR/<run_key>/
// as a whole before anything is sent anywhere, and read back), send what
// the report says (alert: Slack; monitor: Pushgateway and healthcheck),
// remember it between runs (history) and serve it (viewer).
package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// SchemaVersion is the version of report.json this package writes. Fields
// are only ever added within a version.
const SchemaVersion = 1

// Tool is report.json's "tool": it marks a report (and its run folder) as
// clickrecon's, so that pruning never removes another tool's report.json.
const Tool = "clickrecon"

// Status is a report's verdict on the whole window: report.json's
// "status".
type Status string

// Report statuses.
const (
	StatusOK            Status = "ok"            // every day verified, none a gap
	StatusDiscrepancies Status = "discrepancies" // at least one settled day is missing or surplus
	StatusIncomplete    Status = "incomplete"    // a day could not be verified, or the run was cut short
)

// Report is report.json. Counts that are not known are null, never 0.
type Report struct {
	SchemaVersion int            `json:"schema_version"`
	Tool          string         `json:"tool"` // always Tool when clickrecon wrote it
	RunKey        string         `json:"run_key"`
	WorkspaceID   string         `json:"workspace_id"`
	StoreID       string         `json:"store_id"` // an opaque id of the store and query read (no secret)
	Window        Window         `json:"window"`
	GeneratedAt   time.Time      `json:"generated_at"`
	Status        Status         `json:"status"`
	Interrupted   string         `json:"interrupted,omitempty"` // why the run stopped early
	Totals        Totals         `json:"totals"`
	Coverage      Coverage       `json:"coverage"`
	Days          []Day          `json:"days"`
	Links         []Link         `json:"links"`
	Countries     []Country      `json:"countries"`
	Findings      []Finding      `json:"findings"`
	Requests      map[string]int `json:"requests"` // Elido API requests per endpoint, retries included
	Drilldown     Drilldown      `json:"drilldown"`
	// Diagnoses say why each settled gap day lost (or repeated) clicks,
	// where its evidence shows a shape (AddDiagnoses).
	Diagnoses []Diagnosis `json:"diagnoses"`
	// Timelines are what report.html draws of each diagnosed day; not
	// part of report.json.
	Timelines []Timeline `json:"-"`

	// Link is where this run's report.html is served (storage.HTMLURL of
	// RECON_REPORT_URL), for Slack and the healthcheck to link to; "" when
	// RECON_REPORT_URL is unset. It is not part of report.json: the
	// files do not know where they will be served.
	Link string `json:"-"`
}

// Drill-down modes, as Drilldown.Mode names them.
const (
	DrillOff       = "off"         // --drilldown off
	DrillNone      = "none_needed" // no settled day differs: no request made
	DrillBreakdown = "breakdown"   // Elido's /breakdown/link
	DrillFallback  = "fallback"    // /breakdown/link answered 404: /timeseries?link_id= per link
)

// Drilldown says how the days that differ were drilled into.
type Drilldown struct {
	Mode     string `json:"mode"`     // one of the Drill* modes
	Requests int    `json:"requests"` // API requests the drill-down made
	// UncheckedLinks is how many links were not checked: those the
	// fallback had no budget for, and every link of a day whose per-link
	// counts were not read (the store's links of that day). When such a
	// day's links are not known, UncheckedUnknown is set and report.json
	// writes null.
	UncheckedLinks   int  `json:"unchecked_links"`
	UncheckedUnknown bool `json:"-"`
	// UndrilledDays is how many days that differ had a part (links,
	// countries, hours) left unread for want of requests or time;
	// RestRequests is how many more requests that rest would need (an
	// estimate: a day's breakdown is a page per 1000 links), and
	// RestSeconds how long they take at ELIDO_RATE_LIMIT.
	UndrilledDays int `json:"undrilled_days,omitempty"`
	RestRequests  int `json:"rest_requests,omitempty"`
	RestSeconds   int `json:"rest_seconds,omitempty"`
	// LinksBySums are the days (YYYY-MM-DD, date order) whose link rows
	// were proved by sums over a run of days, not read by their own
	// breakdowns: a link whose clicks moved between days and cancel on
	// each day where they differ is not among their rows, and
	// UncheckedLinks does not count it.
	LinksBySums []string `json:"links_by_sums,omitempty"`
}

// drilldownJSON is Drilldown as report.json holds it.
type drilldownJSON struct {
	Mode           string   `json:"mode"`
	Requests       int      `json:"requests"`
	UncheckedLinks *int     `json:"unchecked_links"`
	UndrilledDays  int      `json:"undrilled_days,omitempty"`
	RestRequests   int      `json:"rest_requests,omitempty"`
	RestSeconds    int      `json:"rest_seconds,omitempty"`
	LinksBySums    []string `json:"links_by_sums,omitempty"`
}

// MarshalJSON writes unchecked_links as null when it is not known.
func (d Drilldown) MarshalJSON() ([]byte, error) {
	j := drilldownJSON{Mode: d.Mode, Requests: d.Requests, UndrilledDays: d.UndrilledDays,
		RestRequests: d.RestRequests, RestSeconds: d.RestSeconds, LinksBySums: d.LinksBySums}
	if !d.UncheckedUnknown {
		j.UncheckedLinks = &d.UncheckedLinks
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Drilldown) UnmarshalJSON(data []byte) error {
	var j drilldownJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*d = Drilldown{Mode: j.Mode, Requests: j.Requests, UndrilledDays: j.UndrilledDays,
		RestRequests: j.RestRequests, RestSeconds: j.RestSeconds, UncheckedUnknown: j.UncheckedLinks == nil, LinksBySums: j.LinksBySums}
	if j.UncheckedLinks != nil {
		d.UncheckedLinks = *j.UncheckedLinks
	}
	return nil
}

// Unchecked returns the unchecked links as text: "-" when not known.
func (d Drilldown) Unchecked() string {
	if d.UncheckedUnknown {
		return "-"
	}
	return strconv.Itoa(d.UncheckedLinks)
}

// Window is the reconciled range of calendar days, both inclusive.
type Window struct {
	From string `json:"from"`
	To   string `json:"to"`
	TZ   string `json:"tz"`
}

// Totals sums the days whose two sides were both read and trusted;
// unverifiable days are counted in Coverage only.
type Totals struct {
	API        int64  `json:"api"`
	Local      int64  `json:"local"`
	Delta      int64  `json:"delta"`
	APISummary *int64 `json:"api_summary"` // Elido's /summary for the window; null if not read
	// Unknown says that no day was both read and trusted: API, Local and
	// Delta sum nothing, and report.json writes them as null, never as a 0
	// a script would take for "Elido counted 0".
	Unknown bool `json:"-"`
}

// totalsJSON is Totals as report.json writes it.
type totalsJSON struct {
	API        *int64 `json:"api"`
	Local      *int64 `json:"local"`
	Delta      *int64 `json:"delta"`
	APISummary *int64 `json:"api_summary"`
}

// MarshalJSON writes unknown totals as null.
func (t Totals) MarshalJSON() ([]byte, error) {
	j := totalsJSON{APISummary: t.APISummary}
	if !t.Unknown {
		j.API, j.Local, j.Delta = &t.API, &t.Local, &t.Delta
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads totals back; a null API, Local or Delta makes them
// Unknown.
func (t *Totals) UnmarshalJSON(b []byte) error {
	var j totalsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = Totals{APISummary: j.APISummary, Unknown: j.API == nil || j.Local == nil || j.Delta == nil}
	if !t.Unknown {
		t.API, t.Local, t.Delta = *j.API, *j.Local, *j.Delta
	}
	return nil
}

// Coverage counts the window's days by status.
type Coverage struct {
	Days         int `json:"days"`
	Match        int `json:"match"`
	Missing      int `json:"missing"`
	Surplus      int `json:"surplus"`
	Provisional  int `json:"provisional"`
	Unverifiable int `json:"unverifiable"`
}

// Day is one day's verdict.
type Day struct {
	Date     string             `json:"date"`
	Hours    float64            `json:"hours"`
	API      *int64             `json:"api"`
	Local    *int64             `json:"local"`
	Delta    *int64             `json:"delta"`
	Status   reconcile.Status   `json:"status"`
	Severity reconcile.Severity `json:"severity"`
	Settled  bool               `json:"settled"`
	Reason   string             `json:"reason,omitempty"`
	// HoursWithGap are the hours of a drilled-into day whose counts
	// differ; absent when the hours were not compared.
	HoursWithGap []Hour `json:"hours_with_gap,omitempty"`
	// Repaired is the clicks the run's own repair stage (REPAIR=apply)
	// put back into the store on the day, as the store kept them; its
	// counts above are from before the repair. Absent when none.
	Repaired int64 `json:"repaired,omitempty"`
}

// MarshalJSON writes an unverifiable day's severity as null: how far the
// store is from Elido is not known that day, and "ok" would say it is.
// The fields keep their order; the value is swapped in the encoding, where
// the key cannot occur inside a string (its quotes would be escaped).
func (d Day) MarshalJSON() ([]byte, error) {
	type plain Day // without these methods
	b, err := json.Marshal(plain(d))
	if err != nil || d.Status != reconcile.Unverifiable {
		return b, err
	}
	sev, err := json.Marshal(d.Severity)
	if err != nil {
		return nil, err
	}
	return bytes.Replace(b, append([]byte(`"severity":`), sev...), []byte(`"severity":null`), 1), nil
}

// UnmarshalJSON reads a day back, an unverifiable day's null severity as
// reconcile's OK, which is what Compare gives such a day.
func (d *Day) UnmarshalJSON(b []byte) error {
	type plain Day
	if err := json.Unmarshal(b, (*plain)(d)); err != nil {
		return err
	}
	if d.Severity == "" && d.Status == reconcile.Unverifiable {
		d.Severity = reconcile.OK
	}
	return nil
}

// IsGap reports whether the day is a gap, a settled missing or surplus
// day (reconcile's verdict).
func (d Day) IsGap() bool { return d.Status.IsGap() }

// Hour is one hour of a day whose counts differ. Start is the hour's first
// instant in the window's zone, with its offset, so the two 02:00 hours of
// an autumn DST day are told apart.
type Hour struct {
	Start string `json:"start"`
	API   int64  `json:"api"`
	Local int64  `json:"local"`
	Delta int64  `json:"delta"`
}

// Link is one link's counts on a day where they differ.
type Link struct {
	Date   string           `json:"date"`
	LinkID string           `json:"link_id"`
	API    int64            `json:"api"`
	Local  int64            `json:"local"`
	Delta  int64            `json:"delta"`
	Status reconcile.Status `json:"status"`
}

// Country is one country's counts on a day that differs. Local and Delta
// are null when the store has no country column. CountryCode is "" for
// clicks whose country is not known, written as null in report.json: no
// country is called "".
type Country struct {
	Date        string `json:"date"`
	CountryCode string `json:"country_code"`
	API         int64  `json:"api"`
	Local       *int64 `json:"local"`
	Delta       *int64 `json:"delta"`
}

// countryJSON is Country as report.json writes it.
type countryJSON struct {
	Date        string  `json:"date"`
	CountryCode *string `json:"country_code"`
	API         int64   `json:"api"`
	Local       *int64  `json:"local"`
	Delta       *int64  `json:"delta"`
}

// MarshalJSON writes an unknown country as null.
func (c Country) MarshalJSON() ([]byte, error) {
	j := countryJSON{Date: c.Date, API: c.API, Local: c.Local, Delta: c.Delta}
	if c.CountryCode != "" {
		j.CountryCode = &c.CountryCode
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a country back, null as "".
func (c *Country) UnmarshalJSON(b []byte) error {
	var j countryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Country{Date: j.Date, API: j.API, Local: j.Local, Delta: j.Delta}
	if j.CountryCode != nil {
		c.CountryCode = *j.CountryCode
	}
	return nil
}

// Finding is an observation beyond a single day.
type Finding struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Meta is what the report says about the run beyond the comparison.
type Meta struct {
	RunKey      string
	WorkspaceID string
	StoreID     string // StoreID of the store's identity
	GeneratedAt time.Time
	Interrupted string // non-empty when the run was cut short
	Requests    map[string]int
	Drilldown   Drilldown
}

// New builds a report from a comparison.
func New(res reconcile.Result, w reconcile.Window, meta Meta) Report {
	r := Report{
		SchemaVersion: SchemaVersion,
		Tool:          Tool,
		RunKey:        meta.RunKey,
		WorkspaceID:   meta.WorkspaceID,
		StoreID:       meta.StoreID,
		Window:        Window{From: w.From.String(), To: w.To.String(), TZ: w.Loc.String()},
		GeneratedAt:   meta.GeneratedAt.UTC().Truncate(time.Second),
		Interrupted:   meta.Interrupted,
		Totals: Totals{
			API:        res.Totals.API,
			Local:      res.Totals.Local,
			Delta:      res.Totals.Delta,
			APISummary: res.Totals.APISummary,
			Unknown:    !anyTotalled(res.Days),
		},
		Days:      []Day{},
		Links:     []Link{},
		Countries: []Country{},
		Findings:  []Finding{},
		Diagnoses: []Diagnosis{},
		Requests:  map[string]int{},
		Drilldown: meta.Drilldown,
	}
	for k, v := range meta.Requests {
		r.Requests[k] = v
	}
	for _, d := range res.Days {
		r.Days = append(r.Days, Day{
			Date:     d.Date.String(),
			Hours:    d.Hours,
			API:      d.API,
			Local:    d.Local,
			Delta:    d.Delta,
			Status:   d.Status,
			Severity: d.Severity,
			Settled:  d.Settled,
			Reason:   d.Reason,
		})
		for _, h := range d.HoursWithGap {
			r.Days[len(r.Days)-1].HoursWithGap = append(r.Days[len(r.Days)-1].HoursWithGap, Hour{
				Start: h.Start.In(w.Loc).Format(time.RFC3339), API: h.API, Local: h.Local, Delta: h.Delta,
			})
		}
	}
	for _, l := range res.Links {
		r.Links = append(r.Links, Link{Date: l.Date.String(), LinkID: l.LinkID, API: l.API, Local: l.Local, Delta: l.Delta, Status: l.Status})
	}
	for _, c := range res.Countries {
		r.Countries = append(r.Countries, Country{Date: c.Date.String(), CountryCode: c.CountryCode, API: c.API, Local: c.Local, Delta: c.Delta})
	}
	r.Coverage = coverageOf(r.Days)
	for _, f := range res.Findings {
		r.Findings = append(r.Findings, Finding{Kind: f.Kind, Message: f.Message})
	}
	r.Status = status(r.Coverage, r.Interrupted)
	return r
}

// anyTotalled reports whether a day's two sides were both read and
// trusted, as reconcile's totals sum them: every day but an unverifiable
// one.
func anyTotalled(days []reconcile.DayResult) bool {
	for _, d := range days {
		if d.Status != reconcile.Unverifiable {
			return true
		}
	}
	return false
}

// status is a report's overall status: incomplete when the run was cut
// short, else discrepancies (StatusText: gaps) when a settled day is a
// gap, else incomplete when a day could not be verified, else ok.
func status(c Coverage, interrupted string) Status {
	switch {
	case interrupted != "":
		return StatusIncomplete
	case c.Missing+c.Surplus > 0:
		return StatusDiscrepancies
	case c.Unverifiable > 0:
		return StatusIncomplete
	}
	return StatusOK
}

// StatusText is how a person reads a report's status: "gaps" for
// StatusDiscrepancies, which report.json keeps as its contract, else the
// status itself.
func StatusText(status Status) string {
	if status == StatusDiscrepancies {
		return "gaps"
	}
	return string(status)
}

// coverageOf counts days by status.
func coverageOf(days []Day) Coverage {
	c := Coverage{Days: len(days)}
	for _, d := range days {
		switch d.Status {
		case reconcile.Match:
			c.Match++
		case reconcile.Missing:
			c.Missing++
		case reconcile.Surplus:
			c.Surplus++
		case reconcile.Provisional:
			c.Provisional++
		case reconcile.Unverifiable:
			c.Unverifiable++
		}
	}
	return c
}

// RunKey returns the deterministic key of a run: the same workspace,
// window, zone and store always give the same key, so a rerun of a window
// overwrites its earlier report instead of adding another. store must not
// hold a secret (pass a DSN with its password removed); it is hashed, not
// shown.
func RunKey(workspaceID string, w reconcile.Window, store string) string {
	h := sha256.New()
	for _, part := range []string{workspaceID, w.From.String(), w.To.String(), w.Loc.String(), store} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return fmt.Sprintf("%s_%s_%s", compactDate(w.From), compactDate(w.To), hex.EncodeToString(h.Sum(nil))[:12])
}

// StoreID returns an opaque, stable id of a store and the query read from
// it, for the report and for keeping the alerts of two stores of one
// workspace apart. store must not hold a secret; it is hashed.
func StoreID(store string) string {
	h := sha256.Sum256([]byte("store:" + store))
	return "st_" + hex.EncodeToString(h[:])[:12]
}

func compactDate(d reconcile.Date) string { return strings.ReplaceAll(d.String(), "-", "") }

// worstDays returns the gaps, largest |delta| first.
func worstDays(days []Day) []Day {
	var gaps []Day
	for _, d := range days {
		if d.IsGap() && d.Delta != nil {
			gaps = append(gaps, d)
		}
	}
	sort.SliceStable(gaps, func(i, j int) bool { return abs(*gaps[i].Delta) > abs(*gaps[j].Delta) })
	return gaps
}

// WorstLinks returns the link rows largest |delta| first, then by date and
// link id: the order every rendering lists them in.
func WorstLinks(links []Link) []Link {
	ls := append([]Link(nil), links...)
	sort.SliceStable(ls, func(i, j int) bool {
		a, b := abs(ls[i].Delta), abs(ls[j].Delta)
		switch {
		case a != b:
			return a > b
		case ls[i].Date != ls[j].Date:
			return ls[i].Date < ls[j].Date
		}
		return ls[i].LinkID < ls[j].LinkID
	})
	return ls
}

// abs returns |n|, math.MaxInt64 for math.MinInt64 (whose |n| does not
// fit), so the largest gaps still sort first.
func abs(n int64) int64 {
	switch {
	case n == math.MinInt64:
		return math.MaxInt64
	case n < 0:
		return -n
	}
	return n
}
