package repair_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// fourLinkClicks are clicks of links that differ only by case, by trailing
// spaces or by Unicode normalisation, in day1's 03:00 hour, and those of
// them the store lost.
func fourLinkClicks() (all, lost []elidotest.Click) {
	at := hourOf(day1, 3)
	add := func(n int, link, country string, lostN int) {
		for i := range n {
			c := elidotest.Click{TS: at.Add(time.Duration(len(all)) * time.Second), LinkID: link, CountryCode: country}
			all = append(all, c)
			if i < lostN {
				lost = append(lost, c)
			}
		}
	}
	add(7, "lnk_A", "DE", 3)
	add(11, "lnk_a", "de", 0)
	add(2, "lnk_b", "", 0)
	add(3, "lnk_b ", "DE", 1)
	add(1, "caf\u00e9", "PL", 0)
	add(2, "cafe\u0301", "PL", 1)
	return all, lost
}

// A repair in a store whose collation merges links (MariaDB's default
// utf8mb4_general_ci, a nondeterministic ICU collation on PostgreSQL)
// compares the hour's clicks byte for byte: it puts back exactly the
// clicks lost, each under its own link, and the store then holds Elido's
// clicks.
func TestRepairKeepsLinksApartWhateverTheCollation(t *testing.T) {
	for _, tt := range []struct {
		engine engine
		name   string
		alter  []string
	}{
		{mysqlEngine, "utf8mb4_general_ci", []string{"ALTER TABLE clicks MODIFY link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, MODIFY country_code VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NULL"}},
		{mysqlEngine, "utf8mb4_unicode_ci", []string{"ALTER TABLE clicks MODIFY link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL, MODIFY country_code VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL"}},
		{postgresEngine, "icu_nondeterministic", []string{
			"CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
			"ALTER TABLE clicks ALTER COLUMN link_id TYPE text COLLATE ci, ALTER COLUMN country_code TYPE text COLLATE ci"}},
	} {
		t.Run(tt.engine.name+"_"+tt.name, func(t *testing.T) {
			links, lost := fourLinkClicks()
			elidoClicks := cat(background(day1), links)
			w := tt.engine.worldAltered(t, tt.alter, elidoClicks, without(elidoClicks, lost))
			o := w.options(day1)
			plans := w.plan(t, o)
			var want, got []string
			for _, c := range lost {
				want = append(want, c.LinkID)
			}
			for _, c := range plans[0].Add() {
				got = append(got, c.LinkID)
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Fatalf("the plan's clicks to add (-lost +planned):\n%s\n%+v", diff, plans)
			}
			res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
			if len(res) != 1 || res[0].Err != nil || res[0].Inserted != len(lost) || !res[0].Matches() {
				t.Fatalf("Apply = %+v", res)
			}
			if diff := gocmp.Diff(multiset(elidoClicks, day1), w.rows(t, day1)); diff != "" {
				t.Errorf("the store's clicks differ from Elido's (-elido +store):\n%s", diff)
			}
		})
	}
}

// A click the store's column cannot hold (a 4-byte character in a utf8mb3
// link_id, a character latin1 lacks in a latin1 one) refuses its hour in
// the plan, naming the link id and the column's character set, before
// anything is written; the other hours are repaired, and repair.sql holds
// no insert that would fail half-way.
func TestPlanRefusesClicksTheColumnCannotHold(t *testing.T) {
	for _, tt := range []struct {
		charset, bad, good string
	}{
		{"utf8mb3", "lnk_\U0001F600", "lnk_\u017C"},  // 😀 is 4 bytes; ż is 2
		{"latin1", "lnk_\u017C", "lnk_\u00E9\u20AC"}, // ż is not Latin-1; é and € are (Windows-1252)
	} {
		t.Run(tt.charset, func(t *testing.T) {
			bad := burst(hourOf(day1, 2).Add(time.Minute), 3, tt.bad)
			good := burst(hourOf(day1, 5).Add(time.Minute), 4, tt.good)
			elidoClicks := cat(background(day1), bad, good)
			alter := []string{"ALTER TABLE clicks MODIFY link_id VARCHAR(255) CHARACTER SET " + tt.charset + " COLLATE " + tt.charset + "_bin NOT NULL"}
			w := mysqlEngine.worldAltered(t, alter, elidoClicks, without(elidoClicks, bad, good))
			o := w.options(day1)
			plans := w.plan(t, o)
			if len(plans) != 1 || len(plans[0].Hours) != 2 {
				t.Fatalf("plans = %+v, want the two hours", plans)
			}
			refused, repaired := plans[0].Hours[0], plans[0].Hours[1]
			for _, want := range []string{tt.bad, "clicks.link_id", tt.charset} {
				if !strings.Contains(refused.Refused, want) {
					t.Errorf("the hour of %q: Refused = %q, want it to name %q", tt.bad, refused.Refused, want)
				}
			}
			if !repaired.Repairable() || len(repaired.Add) != len(good) {
				t.Errorf("the hour of %q = %+v, want repaired", tt.good, repaired)
			}
			var script bytes.Buffer
			if err := repair.WriteSQL(&script, plans, mysqlEngine.dialect); err != nil {
				t.Fatal(err)
			}
			if err := w.engine.sqlRunner(t, w)(t.Context(), script.String()); err != nil {
				t.Fatalf("repair.sql failed: %v", err)
			}
			if diff := gocmp.Diff(multiset(without(elidoClicks, bad), day1), w.rows(t, day1)); diff != "" {
				t.Errorf("after repair.sql the store differs from Elido's clicks less the refused hour's (-want +store):\n%s", diff)
			}
		})
	}
}
