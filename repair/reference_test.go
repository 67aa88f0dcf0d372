package repair_test

// The reference model: random clicks, written to each engine in each
// column type and collation users have, read back through the store's own
// functions (Totals, Counts, CountryCounts, HourlyCounts, and a repair's
// Plan, which reads Clicks and EventColumns): every count and every plan
// must equal what a few lines of plain Go compute from the same clicks, or
// be refused with the reason the model expects. A seed that ever failed
// goes into testdata/reference_seeds.txt and is run for good.

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// refTarget is one row of the table: an engine, a column type for ts, a
// collation (and character set) for the text columns, and the zone a
// wall-clock ts holds. Add rows to try more of the stores users have.
type refTarget struct {
	name   string
	create func(t *testing.T) (*sqlx.DB, string) // a fresh database with its clicks table
	write  func(t *testing.T, db *sqlx.DB, clicks []refClick, r *rand.Rand)
	// wallZone is STORE_TIMESTAMP_TZ, for a ts without a zone; nil for an
	// instant column (or a wall clock in UTC).
	wallZone *time.Location
	// holds says whether the columns can store a link id; a click of one
	// they cannot is never in the store, and a plan must refuse its hour
	// naming refuses.
	holds    func(link string) bool
	refuses  string
	notBytes string // when set, per-link counts and plans are refused naming it
}

// refClick is a click with how the store's writer spelled an unknown
// country: NULL, or an empty string.
type refClick struct {
	elidotest.Click
	nullCountry bool
}

func anyLink(string) bool { return true }

// bmp says whether a link id has no 4-byte character (utf8mb3).
func bmp(link string) bool {
	for _, r := range link {
		if r > 0xFFFF {
			return false
		}
	}
	return true
}

func pgTarget(name, tsType, collation string, wall *time.Location, setup ...string) refTarget {
	return refTarget{
		name: "postgres_" + name,
		create: func(t *testing.T) (*sqlx.DB, string) {
			db, raw := pgtest.New(t)
			for _, stmt := range append(setup,
				"CREATE TABLE clicks (ts "+tsType+" NOT NULL, link_id text COLLATE "+collation+" NOT NULL, country_code text COLLATE "+collation+")",
				"CREATE INDEX clicks_ts_idx ON clicks (ts)") {
				db.MustExec(stmt)
			}
			return db, raw
		},
		write: func(t *testing.T, db *sqlx.DB, clicks []refClick, _ *rand.Rand) {
			ts := "ts"
			if wall != nil {
				ts = "ts AT TIME ZONE " + pq.QuoteLiteral(wall.String())
			}
			var tss, links, countries []string
			var nulls []bool
			for _, c := range clicks {
				tss = append(tss, c.TS.UTC().Format(time.RFC3339Nano))
				links, countries, nulls = append(links, c.LinkID), append(countries, c.CountryCode), append(nulls, c.nullCountry)
			}
			db.MustExec(`INSERT INTO clicks (ts, link_id, country_code)
SELECT `+ts+`, link, CASE WHEN n THEN NULL ELSE country END
FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::bool[]) AS c (ts, link, country, n)`,
				pq.Array(tss), pq.Array(links), pq.Array(countries), pq.Array(nulls))
		},
		wallZone: wall, holds: anyLink,
	}
}

func mariaTarget(name, tsType, charset, collation, linkType string, holds func(string) bool) refTarget {
	if linkType == "" {
		linkType = "VARCHAR(255)"
	}
	return refTarget{
		name: "mariadb_" + name,
		create: func(t *testing.T) (*sqlx.DB, string) {
			db, raw := mysqltest.New(t)
			db.MustExec("CREATE TABLE clicks (id BIGINT AUTO_INCREMENT PRIMARY KEY, ts " + tsType + " NOT NULL, " +
				"link_id " + linkType + " CHARACTER SET " + charset + " COLLATE " + collation + " NOT NULL, " +
				"country_code VARCHAR(8) CHARACTER SET " + charset + " COLLATE " + collation + " NULL, KEY clicks_ts_idx (ts)) ENGINE = InnoDB")
			return db, raw
		},
		write: func(t *testing.T, db *sqlx.DB, clicks []refClick, _ *rand.Rand) {
			for part := range slices.Chunk(clicks, 500) {
				values := strings.TrimSuffix(strings.Repeat("(?, ?, ?),", len(part)), ",")
				var args []any
				for _, c := range part {
					var country any = c.CountryCode
					if c.nullCountry {
						country = nil
					}
					args = append(args, c.TS.UTC().Format("2006-01-02 15:04:05.000"), c.LinkID, country)
				}
				db.MustExec("INSERT INTO clicks (ts, link_id, country_code) VALUES "+values, args...)
			}
		},
		holds: holds, refuses: charset,
	}
}

// sqliteTarget writes each ts as RFC 3339 text with the offset of a zone
// picked at random: the store compares instants, never text.
var sqliteTarget = refTarget{
	name: "sqlite",
	create: func(t *testing.T) (*sqlx.DB, string) {
		path := filepath.Join(t.TempDir(), "clicks.db")
		db, err := sqlx.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		schema, err := os.ReadFile(filepath.Join("..", "sql", "store", "sqlite", "events.sql"))
		if err != nil {
			t.Fatal(err)
		}
		db.MustExec(string(schema))
		return db, "sqlite:" + path
	},
	write: func(t *testing.T, db *sqlx.DB, clicks []refClick, r *rand.Rand) {
		tx := db.MustBegin()
		for _, c := range clicks {
			var country any = c.CountryCode
			if c.nullCountry {
				country = nil
			}
			ts := c.TS.In(refZones[r.IntN(len(refZones))].loc).Format("2006-01-02T15:04:05.000Z07:00")
			tx.MustExec("INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)", ts, c.LinkID, country)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	},
	holds: anyLink,
}

const pgICUCollation = "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"

func refTargets() []refTarget {
	tokyo := mustLoad("Asia/Tokyo")
	return []refTarget{
		pgTarget("timestamptz_default", "timestamptz", `"default"`, nil),
		pgTarget("timestamptz_C", "timestamptz", `"C"`, nil),
		pgTarget("timestamptz_icu_nondeterministic", "timestamptz", "ci", nil, pgICUCollation),
		pgTarget("timestamp_tokyo_wall_clock", "timestamp(3)", `"default"`, tokyo),
		mariaTarget("timestamp_utf8mb4_general_ci", "TIMESTAMP(3)", "utf8mb4", "utf8mb4_general_ci", "", anyLink),
		mariaTarget("timestamp_utf8mb4_bin", "TIMESTAMP(3)", "utf8mb4", "utf8mb4_bin", "", anyLink),
		mariaTarget("timestamp_utf8mb4_nopad_bin", "TIMESTAMP(3)", "utf8mb4", "utf8mb4_nopad_bin", "", anyLink),
		mariaTarget("timestamp_utf8mb3_general_ci", "TIMESTAMP(3)", "utf8mb3", "utf8mb3_general_ci", "", bmp),
		mariaTarget("datetime_utc_utf8mb4_unicode_ci", "DATETIME(3)", "utf8mb4", "utf8mb4_unicode_ci", "", anyLink),
		func() refTarget {
			r := mariaTarget("timestamp_char_link_id", "TIMESTAMP(3)", "utf8mb4", "utf8mb4_nopad_bin", "CHAR(64)", anyLink)
			r.notBytes = "clicks.link_id is CHAR"
			return r
		}(),
		sqliteTarget,
	}
}

// refZone is a zone a day is reconciled in, and days to try in it: its
// DST switches, and one without.
type refZone struct {
	loc  *time.Location
	days []string
}

var refZones = []refZone{
	{mustLoad("Europe/Warsaw"), []string{"2026-03-29", "2026-10-25", "2026-11-26"}},
	{mustLoad("America/New_York"), []string{"2026-03-08", "2026-11-01"}},
	{mustLoad("Australia/Lord_Howe"), []string{"2026-04-05", "2026-10-04"}}, // half-hour DST
	{mustLoad("Asia/Tokyo"), []string{"2026-06-15"}},
	{time.UTC, []string{"2026-01-01"}},
}

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// refLinks are link ids that differ only by case, by trailing spaces, by
// Unicode normalisation, or hold a 4-byte character.
var refLinks = []string{"lnk_A", "lnk_a", "lnk_b", "lnk_b ", "lnk_b  ", "caf\u00e9", "cafe\u0301", "lnk_\U0001F600", "LNK_A", "x"}

// refCountries are countries as stores hold them: NULL and empty (both an
// unknown country) and codes that differ only by case.
var refCountries = []string{"DE", "de", "PL", "", "DE "}

// refCase is one seed's clicks: Elido's, the store's, the day and zone.
type refCase struct {
	day   reconcile.Date
	loc   *time.Location
	elido []elidotest.Click
	store []refClick
}

// generate draws a case from seed for target tg: about 150 clicks on and
// around the day, many near its DST switch and its bounds; about one in
// six lost by the store (always, where its column cannot hold the link),
// about one in ten of those it holds held twice, and a few surplus ones
// only the store has.
func generate(seed uint64, tg refTarget) refCase {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	// The store's duplicates are drawn from a stream of their own, so that
	// every other draw of a seed is what it was before they were.
	twins := rand.New(rand.NewPCG(seed^0x5bd1e995, seed))
	z := refZones[r.IntN(len(refZones))]
	if tg.wallZone != nil {
		z = refZone{tg.wallZone, []string{"2026-06-15"}} // the wall-clock rules of DST days are not this table's
	}
	day := mustDate(z.days[r.IntN(len(z.days))])
	y, m, d := day.Year, day.Month, day.Day
	start := time.Date(y, m, d, 0, 0, 0, 0, z.loc)
	end := time.Date(y, m, d+1, 0, 0, 0, 0, z.loc)
	var switches []time.Time
	for at := start; at.Before(end); at = at.Add(time.Minute) {
		if _, a := at.Zone(); func() bool { _, b := at.Add(time.Minute).Zone(); return a != b }() {
			switches = append(switches, at.Add(time.Minute))
		}
	}
	instant := func() time.Time {
		var at time.Time
		switch k := r.IntN(10); {
		case k < 4 && len(switches) > 0:
			at = switches[r.IntN(len(switches))].Add(time.Duration(r.Int64N(int64(3*time.Hour))) - 90*time.Minute)
		case k < 6:
			edge := []time.Time{start, end}[r.IntN(2)]
			at = edge.Add(time.Duration(r.Int64N(int64(4*time.Second))) - 2*time.Second)
		case k < 7:
			at = start.Add(time.Duration(r.IntN(26)) * time.Hour) // exact hour boundaries
		default:
			at = start.Add(time.Duration(r.Int64N(int64(end.Sub(start)+2*time.Hour))) - time.Hour)
		}
		return at.Truncate(time.Millisecond)
	}
	var c refCase
	c.day, c.loc = day, z.loc
	n := 100 + r.IntN(100)
	for range n {
		click := elidotest.Click{TS: instant(), LinkID: refLinks[r.IntN(len(refLinks))], CountryCode: refCountries[r.IntN(len(refCountries))]}
		if r.IntN(8) == 0 && len(c.elido) > 0 {
			click = c.elido[r.IntN(len(c.elido))] // the same click twice: a multiset
		}
		c.elido = append(c.elido, click)
		if tg.holds(click.LinkID) && r.IntN(6) != 0 {
			c.store = append(c.store, refClick{click, click.CountryCode == "" && r.IntN(2) == 0})
			if twins.IntN(10) == 0 { // a receiver that stored it twice
				c.store = append(c.store, c.store[len(c.store)-1])
			}
		}
	}
	for range r.IntN(6) {
		click := elidotest.Click{TS: instant(), LinkID: refLinks[r.IntN(len(refLinks))], CountryCode: refCountries[r.IntN(len(refCountries))]}
		if tg.holds(click.LinkID) {
			c.store = append(c.store, refClick{click, false})
		}
	}
	return c
}

// The reference's answers, in plain Go.

func (c refCase) bounds() (time.Time, time.Time) {
	y, m, d := c.day.Year, c.day.Month, c.day.Day
	return time.Date(y, m, d, 0, 0, 0, 0, c.loc), time.Date(y, m, d+1, 0, 0, 0, 0, c.loc)
}

func (c refCase) inDay(at time.Time) bool {
	from, to := c.bounds()
	return !at.Before(from) && at.Before(to)
}

func (c refCase) storeClicks() []elidotest.Click {
	out := make([]elidotest.Click, len(c.store))
	for i, s := range c.store {
		out[i] = s.Click
	}
	return out
}

// refCounts are a day's counts of clicks: total, per link (bytes), per
// country (NULL and empty alike: unknown) and per hour from the day's first
// instant (the last one cut at the day's end).
type refCounts struct {
	total     int64
	links     map[string]int64
	countries map[string]int64
	hours     []int64
}

func (c refCase) count(clicks []elidotest.Click) refCounts {
	from, to := c.bounds()
	rc := refCounts{links: map[string]int64{}, countries: map[string]int64{}}
	for h := from; h.Before(to); h = h.Add(time.Hour) {
		rc.hours = append(rc.hours, 0)
	}
	for _, k := range clicks {
		if !c.inDay(k.TS) {
			continue
		}
		rc.total++
		rc.links[k.LinkID]++
		rc.countries[k.CountryCode]++
		rc.hours[int(k.TS.Sub(from)/time.Hour)]++
	}
	return rc
}

// refHour is what a repair plan must say of an hour.
type refHour struct {
	From    time.Time
	Add     []string
	Surplus []string
	Refused bool
}

func clickKey(k elidotest.Click) string {
	return fmt.Sprintf("%s|%q|%q", k.TS.UTC().Format("2006-01-02T15:04:05.000Z"), k.LinkID, k.CountryCode)
}

// plan is the repair the reference expects: nothing unless the store has
// fewer of the day's clicks than Elido; else each hour whose counts
// differ, and each whose counts agree but whose clicks differ where the
// store holds a click twice (or, once one of those shows a row Elido does
// not count, anywhere on the day), with the multiset differences, refused
// when a click to add is one the store's columns cannot hold.
func (c refCase) plan(tg refTarget) []refHour {
	api, local := c.count(c.elido), c.count(c.storeClicks())
	if local.total >= api.total {
		return nil
	}
	from, _ := c.bounds()
	var out, hidden []refHour
	foreign := false
	for i := range api.hours {
		h := refHour{From: from.Add(time.Duration(i) * time.Hour).UTC()}
		n := map[string]int{}
		inHour := func(k elidotest.Click) bool { return c.inDay(k.TS) && int(k.TS.Sub(from)/time.Hour) == i }
		for _, k := range c.elido {
			if inHour(k) {
				n[clickKey(k)]++
			}
		}
		twice, held := false, map[string]bool{}
		for _, k := range c.storeClicks() {
			if inHour(k) {
				n[clickKey(k)]--
				twice = twice || held[clickKey(k)]
				held[clickKey(k)] = true
			}
		}
		differ := false
		for _, v := range n {
			differ = differ || v != 0
		}
		for _, k := range c.elido {
			if inHour(k) && n[clickKey(k)] > 0 {
				n[clickKey(k)]--
				h.Add = append(h.Add, clickKey(k))
				h.Refused = h.Refused || !tg.holds(k.LinkID)
			}
		}
		for _, k := range c.storeClicks() {
			if inHour(k) && n[clickKey(k)] < 0 {
				n[clickKey(k)]++
				h.Surplus = append(h.Surplus, clickKey(k))
			}
		}
		if h.Refused {
			h.Add = nil
		}
		slices.Sort(h.Add)
		slices.Sort(h.Surplus)
		switch {
		case api.hours[i] != local.hours[i] || twice && differ:
			out = append(out, h)
			foreign = foreign || len(h.Surplus) > 0
		case differ:
			hidden = append(hidden, h) // a lost click and a row Elido does not count
		}
	}
	// A day holding a row Elido does not count has every hour read.
	if foreign {
		out = append(out, hidden...)
		slices.SortFunc(out, func(a, b refHour) int { return a.From.Compare(b.From) })
	}
	return out
}

// refSeeds are the seeds every run tries: those in
// testdata/reference_seeds.txt (each one that ever failed), and one new
// one, logged.
func refSeeds(t *testing.T) []uint64 {
	f, err := os.Open(filepath.Join("testdata", "reference_seeds.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var seeds []uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := strconv.ParseUint(strings.Fields(line)[0], 10, 64)
		if err != nil {
			t.Fatalf("reference_seeds.txt: %q: %v", line, err)
		}
		seeds = append(seeds, s)
	}
	fresh := uint64(time.Now().UnixNano())
	t.Logf("new seed %d (add it to testdata/reference_seeds.txt if it fails)", fresh)
	return append(seeds, fresh)
}

func TestStoreAgainstTheReferenceModel(t *testing.T) {
	seeds := refSeeds(t)
	events, err := store.PresetQuery(store.PresetEvents)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range refTargets() {
		t.Run(tg.name, func(t *testing.T) {
			db, raw := tg.create(t)
			st, err := store.Open(t.Context(), dbtest.Parsed(t, store.ParseDSN, raw), store.Options{TimestampZone: tg.wallZone})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, seed := range seeds {
				c := generate(seed, tg)
				db.MustExec("DELETE FROM clicks")
				tg.write(t, db, c.store, rand.New(rand.NewPCG(seed, 1)))
				if failed := checkReference(t, tg, st, events, c); failed != "" {
					t.Errorf("seed %d (%s in %s): %s\nkeep it: add %d to repair/testdata/reference_seeds.txt", seed, c.day, c.loc, failed, seed)
				}
			}
		})
	}
}

// checkReference reads c's day from st as a run and a repair do and says
// where it differs from the reference, or "".
func checkReference(t *testing.T, tg refTarget, st *store.Store, q store.Query, c refCase) string {
	ctx := t.Context()
	want := c.count(c.storeClicks())
	var bad []string
	totals, err := st.Totals(ctx, q, []reconcile.Date{c.day}, c.loc)
	if got := totals[c.day]; err != nil || got.Err != nil || got.Clicks != want.total {
		bad = append(bad, fmt.Sprintf("day total %+v, %v; want %d", got, err, want.total))
	}
	links, err := st.Counts(ctx, q, c.day, c.loc)
	switch {
	case tg.notBytes != "":
		if !errors.Is(err, store.ErrNotByteWise) || !strings.Contains(err.Error(), tg.notBytes) {
			bad = append(bad, fmt.Sprintf("per-link counts: %v; want refused naming %q", err, tg.notBytes))
		}
	case err != nil:
		bad = append(bad, fmt.Sprintf("per-link counts: %v", err))
	default:
		if diff := gocmp.Diff(want.links, links.Links); diff != "" {
			bad = append(bad, "per-link counts (-reference +store):\n"+diff)
		}
	}
	countries, err := st.CountryCounts(ctx, q, c.day, c.loc)
	if diff := gocmp.Diff(want.countries, countries); err != nil || diff != "" {
		bad = append(bad, fmt.Sprintf("per-country counts: %v (-reference +store):\n%s", err, diff))
	}
	hours, err := st.HourlyCounts(ctx, q, c.day, c.loc)
	var got []int64
	for _, h := range hours {
		got = append(got, h.Clicks)
	}
	if diff := gocmp.Diff(want.hours, got); err != nil || diff != "" {
		bad = append(bad, fmt.Sprintf("hourly counts: %v (-reference +store):\n%s", err, diff))
	}
	if msg := checkPlan(t, tg, st, q, c); msg != "" {
		bad = append(bad, msg)
	}
	return strings.Join(bad, "\n")
}

// checkPlan plans the repair of c's day against a fake Elido holding c's
// clicks, and compares it with the reference's plan.
func checkPlan(t *testing.T, tg refTarget, st *store.Store, q store.Query, c refCase) string {
	ws := "ws_reference"
	srv := elidotest.NewServer(ws, testKey, c.elido)
	defer srv.Close()
	api, err := elido.New(elido.Config{BaseURL: srv.URL(), APIKey: testKey, WorkspaceID: ws, RatePerMinute: 6_000_000})
	if err != nil {
		t.Fatal(err)
	}
	_, end := c.bounds()
	o := repair.Options{Window: reconcile.Window{From: c.day, To: c.day, Loc: c.loc}, Settle: time.Hour, Now: end.Add(48 * time.Hour), Query: q}
	plans, err := repair.Plan(t.Context(), api, st, o)
	want := c.plan(tg)
	switch {
	case tg.notBytes != "" && want != nil:
		if !errors.Is(err, store.ErrNotByteWise) || !strings.Contains(err.Error(), tg.notBytes) {
			return fmt.Sprintf("repair plan: %v; want refused naming %q", err, tg.notBytes)
		}
		return ""
	case err != nil:
		return fmt.Sprintf("repair plan: %v", err)
	case len(plans) != 1:
		return fmt.Sprintf("repair plan: %d days, want 1", len(plans))
	}
	var gotHours []refHour
	for _, h := range plans[0].Hours {
		rh := refHour{From: h.From.UTC(), Refused: h.Refused != ""}
		for _, k := range h.Add {
			rh.Add = append(rh.Add, clickKey(elidotest.Click(k)))
		}
		for _, k := range h.Surplus {
			rh.Surplus = append(rh.Surplus, clickKey(elidotest.Click(k)))
		}
		slices.Sort(rh.Add)
		slices.Sort(rh.Surplus)
		if rh.Refused && (tg.refuses == "" || !strings.Contains(h.Refused, tg.refuses)) {
			return fmt.Sprintf("repair plan: the hour from %s is refused for %q; want its reason to name %q", h.From, h.Refused, tg.refuses)
		}
		gotHours = append(gotHours, rh)
	}
	if plans[0].Skipped != "" && want == nil {
		return ""
	}
	if diff := gocmp.Diff(want, gotHours); diff != "" {
		return fmt.Sprintf("repair plan (skipped %q) (-reference +plan):\n%s", plans[0].Skipped, diff)
	}
	return ""
}
