package repair

import (
	"bytes"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestDiff(t *testing.T) {
	a := Click{at("2026-10-24T02:00:00.001Z"), "lnk_a", "PL"}
	b := Click{at("2026-10-24T02:00:00.002Z"), "lnk_b", ""}
	c := Click{at("2026-10-24T02:00:00.003Z"), "lnk_a", "DE"}
	tests := []struct {
		name             string
		api, local       []Click
		wantAdd, wantSur []Click
	}{
		{"same_clicks_nothing", []Click{a, b}, []Click{b, a}, nil, nil},
		{"lost_click_added", []Click{a, b, c}, []Click{a, c}, []Click{b}, nil},
		{"same_click_twice_lost_once", []Click{a, a, a}, []Click{a}, []Click{a, a}, nil},
		{"duplicate_row_is_surplus", []Click{a}, []Click{a, a}, nil, []Click{a}},
		{"store_microseconds_compare_at_api_precision",
			[]Click{a}, []Click{{a.TS.Add(456 * time.Microsecond), "lnk_a", "PL"}}, nil, nil},
		{"country_differs_both_sides",
			[]Click{a}, []Click{{a.TS, "lnk_a", "DE"}}, []Click{a}, []Click{{a.TS, "lnk_a", "DE"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			add, sur := Diff(tt.api, tt.local)
			if diff := gocmp.Diff(tt.wantAdd, add); diff != "" {
				t.Errorf("add (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(tt.wantSur, sur); diff != "" {
				t.Errorf("surplus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanHour(t *testing.T) {
	a := Click{at("2026-10-24T02:00:00.001Z"), "lnk_a", "PL"}
	b := Click{at("2026-10-24T02:10:00.000Z"), "lnk_b", ""}
	c := Click{at("2026-10-24T02:15:00.000Z"), "lnk_c", "DE"}
	nul := Click{at("2026-10-24T02:20:00.000Z"), "lnk\x00x", "PL"}
	bad := Click{at("2026-10-24T02:20:00.000Z"), "lnk_d", "\xff"}
	h := Hour{From: at("2026-10-24T02:00:00Z"), To: at("2026-10-24T03:00:00Z")}
	tests := []struct {
		name        string
		api, store  int64
		apiClicks   []Click
		again       []Click // nil: apiClicks
		local       []Click
		wantAdd     int
		wantRefused string
	}{
		{"lost_click_restored", 2, 1, []Click{a, b}, nil, []Click{a}, 1, ""},
		{"source_incomplete_refused", 3, 1, []Click{a, b}, nil, []Click{a}, 0, "clicks/recent gave 2 clicks for this hour, Elido counts 3"},
		{"store_changed_while_read_refused", 2, 2, []Click{a, b}, nil, []Click{a}, 0, "it changed while it was read"},
		// A page boundary repeated c and lost b: the count adds up, and
		// the diff would put c back a second time.
		{"reads_disagree_refused", 3, 2, []Click{a, c, c}, []Click{a, b, c}, []Click{a, c}, 0,
			"clicks/recent gave other clicks when read again with other page boundaries (3 and 3 clicks, 2 not in both)"},
		{"reads_in_another_order_restored", 2, 1, []Click{b, a}, []Click{a, b}, []Click{a}, 1, ""},
		{"nul_byte_refused", 2, 1, []Click{a, nul}, nil, []Click{a}, 0,
			`its click at 2026-10-24T02:20:00.000Z cannot be written: its link id "lnk\x00x" holds a NUL byte`},
		{"invalid_utf8_country_refused", 2, 1, []Click{a, bad}, nil, []Click{a}, 0, "its country \"\\xff\" is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hh := h
			hh.API, hh.Store = tt.api, tt.store
			again := tt.again
			if again == nil {
				again = tt.apiClicks
			}
			p := PlanHour(hh, tt.apiClicks, again, tt.local)
			if len(p.Add) != tt.wantAdd {
				t.Errorf("got %d to add, want %d", len(p.Add), tt.wantAdd)
			}
			if tt.wantRefused == "" && p.Refused != "" || !strings.Contains(p.Refused, tt.wantRefused) {
				t.Errorf("Refused = %q, want %q", p.Refused, tt.wantRefused)
			}
			if tt.wantRefused != "" && p.Repairable() {
				t.Error("a refused hour is repairable")
			}
		})
	}
}

func TestWriteSQLQuotesHostileValues(t *testing.T) {
	hostile := Click{at("2026-10-24T02:00:00.001Z"), `x'); DROP TABLE clicks; --`, `P'L`}
	p := []DayPlan{{Hours: []HourPlan{{Add: []Click{hostile}}}}}
	var b bytes.Buffer
	if err := WriteSQL(&b, p, dsn.Postgres); err != nil {
		t.Fatal(err)
	}
	want := `INSERT INTO clicks (ts, link_id, country_code) VALUES ('2026-10-24T02:00:00.001Z', 'x''); DROP TABLE clicks; --', 'P''L');`
	if !strings.Contains(b.String(), want) {
		t.Errorf("repair.sql:\n%s\nwant the line\n%s", b.String(), want)
	}
	nul := []DayPlan{{Hours: []HourPlan{{Add: []Click{{hostile.TS, "a\x00b", ""}}}}}}
	if err := WriteSQL(&b, nul, dsn.Postgres); err == nil {
		t.Error("a link id with a NUL byte was written")
	}
}

func TestWriteCSVNeutralisesFormulas(t *testing.T) {
	p := []DayPlan{{Hours: []HourPlan{{Add: []Click{{at("2026-10-24T02:00:00.001Z"), "=HYPERLINK(1)", ""}}}}}}
	var b bytes.Buffer
	if err := WriteCSV(&b, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ",'=HYPERLINK(1),") {
		t.Errorf("repair.csv:\n%s", b.String())
	}
}
