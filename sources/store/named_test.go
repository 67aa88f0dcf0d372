package store

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

func TestBindNamed(t *testing.T) {
	values := map[string]any{"day": "D", "from": "F", "to": "T", "tz": "Z"}
	tests := []struct {
		name       string
		query      string
		wantPG     string
		wantSQLite string
		wantArgs   []any
	}{
		{
			name:       "parameters_become_numbered_placeholders",
			query:      "SELECT link_id, count(*) AS clicks FROM clicks WHERE ts >= :from AND ts < :to GROUP BY link_id",
			wantPG:     "SELECT link_id, count(*) AS clicks FROM clicks WHERE ts >= $1 AND ts < $2 GROUP BY link_id",
			wantSQLite: "SELECT link_id, count(*) AS clicks FROM clicks WHERE ts >= ?1 AND ts < ?2 GROUP BY link_id",
			wantArgs:   []any{"F", "T"},
		},
		{
			name:       "parameter_used_twice_keeps_its_number",
			query:      "SELECT :tz, :day, :tz",
			wantPG:     "SELECT $1, $2, $1",
			wantSQLite: "SELECT ?1, ?2, ?1",
			wantArgs:   []any{"Z", "D"},
		},
		{
			name:       "postgres_casts_survive",
			query:      "WHERE ts::date = :day::date AND ts >= :from::timestamptz",
			wantPG:     "WHERE ts::date = $1::date AND ts >= $2::timestamptz",
			wantSQLite: "WHERE ts::date = ?1::date AND ts >= ?2::timestamptz",
			wantArgs:   []any{"D", "F"},
		},
		{
			name:       "parameter_at_the_very_end",
			query:      "WHERE day = :day",
			wantPG:     "WHERE day = $1",
			wantSQLite: "WHERE day = ?1",
			wantArgs:   []any{"D"},
		},
		{
			name:       "colons_in_literals_and_comments_are_not_parameters",
			query:      "SELECT ':nope', \"a:b\", E'\\':x', $$ :y $$, $q$ :z $q$ -- :c\n/* :d /* :e */ */ FROM t WHERE x = :tz",
			wantPG:     "SELECT ':nope', \"a:b\", E'\\':x', $$ :y $$, $q$ :z $q$ -- :c\n/* :d /* :e */ */ FROM t WHERE x = $1",
			wantSQLite: "SELECT ':nope', \"a:b\", E'\\':x', $$ :y $$, $q$ :z $q$ -- :c\n/* :d /* :e */ */ FROM t WHERE x = ?1",
			wantArgs:   []any{"Z"},
		},
		{
			name:       "doubled_quotes_stay_inside_the_literal",
			query:      "SELECT 'it''s :x', \"col\"\":y\" WHERE a = :day",
			wantPG:     "SELECT 'it''s :x', \"col\"\":y\" WHERE a = $1",
			wantSQLite: "SELECT 'it''s :x', \"col\"\":y\" WHERE a = ?1",
			wantArgs:   []any{"D"},
		},
		{
			name:       "time_literal_and_array_slice",
			query:      "SELECT a[1:2] WHERE t > '10:30' AND d = :day",
			wantPG:     "SELECT a[1:2] WHERE t > '10:30' AND d = $1",
			wantSQLite: "SELECT a[1:2] WHERE t > '10:30' AND d = ?1",
			wantArgs:   []any{"D"},
		},
		{
			name:       "identifier_with_dollar_is_not_a_quote",
			query:      "SELECT a$b$ FROM t WHERE d = :day",
			wantPG:     "SELECT a$b$ FROM t WHERE d = $1",
			wantSQLite: "SELECT a$b$ FROM t WHERE d = ?1",
			wantArgs:   []any{"D"},
		},
		{
			name:       "trailing_semicolon_and_comment_are_fine",
			query:      "SELECT :day; -- done\n",
			wantPG:     "SELECT $1; -- done\n",
			wantSQLite: "SELECT ?1; -- done\n",
			wantArgs:   []any{"D"},
		},
		{
			name:       "no_parameters",
			query:      "SELECT link_id, clicks FROM v",
			wantPG:     "SELECT link_id, clicks FROM v",
			wantSQLite: "SELECT link_id, clicks FROM v",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nq, err := parseNamed(tt.query)
			if err != nil {
				t.Fatalf("parseNamed: %v", err)
			}
			for _, d := range []struct {
				dialect dsn.Dialect
				want    string
			}{{dsn.Postgres, tt.wantPG}, {dsn.SQLite, tt.wantSQLite}} {
				got, args, err := nq.bind(d.dialect, values)
				if err != nil {
					t.Fatalf("bind %s: %v", d.dialect, err)
				}
				if diff := cmp.Diff(d.want, got); diff != "" {
					t.Errorf("%s query (-want +got):\n%s", d.dialect, diff)
				}
				if diff := cmp.Diff(tt.wantArgs, args); diff != "" {
					t.Errorf("%s args (-want +got):\n%s", d.dialect, diff)
				}
			}
		})
	}
}

func TestParseNamedRejects(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  []string // substrings of the error
	}{
		{"unknown_parameter_names_the_allowed_ones", "SELECT link_id, count(*) AS clicks FROM clicks\nWHERE day = :date", []string{":date", "line 2", ":day, :from, :to and :tz"}},
		{"parameter_names_are_case_sensitive", "SELECT :DAY", []string{":DAY", ":day, :from, :to and :tz"}},
		{"positional_dollar_parameter", "SELECT link_id FROM t WHERE day = $1", []string{"positional", ":day, :from, :to and :tz"}},
		{"second_statement", "SELECT 1; DELETE FROM clicks", []string{"single statement", "line 1"}},
		{"commit_then_write", "COMMIT;\nDELETE FROM clicks RETURNING link_id, 1 AS clicks", []string{"single statement"}},
		{"unterminated_string", "SELECT 'abc", []string{"unterminated '"}},
		{"unterminated_comment", "SELECT 1 /* abc", []string{"unterminated /*"}},
		{"unterminated_dollar_quote", "SELECT $x$ abc", []string{"unterminated $x$"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseNamed(tt.query)
			if err == nil {
				t.Fatal("parseNamed succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestQueries(t *testing.T) {
	t.Run("presets_parse", func(t *testing.T) {
		for _, name := range []string{PresetEvents, PresetDaily} {
			q, err := PresetQuery(name)
			if err != nil {
				t.Fatalf("PresetQuery(%q): %v", name, err)
			}
			if q.Name() != name {
				t.Errorf("Name() = %q, want %q", q.Name(), name)
			}
		}
		for _, d := range []dsn.Dialect{dsn.Postgres, dsn.SQLite} {
			if _, err := spanQuery(d); err != nil {
				t.Errorf("span query for %s: %v", d, err)
			}
			if _, err := countriesQuery(d); err != nil {
				t.Errorf("countries query for %s: %v", d, err)
			}
		}
	})
	t.Run("unknown_preset_lists_the_presets", func(t *testing.T) {
		_, err := PresetQuery("hourly")
		if err == nil || !strings.Contains(err.Error(), "events or daily") {
			t.Errorf("PresetQuery(hourly) error = %v, want one naming events and daily", err)
		}
	})
	t.Run("empty_custom_query", func(t *testing.T) {
		if _, err := CustomQuery(" \n\t"); err == nil {
			t.Error("CustomQuery of blank text succeeded")
		}
	})
	t.Run("custom_query_with_unknown_parameter", func(t *testing.T) {
		_, err := CustomQuery("SELECT link_id, clicks FROM counts WHERE shop = :shop")
		if err == nil || !strings.Contains(err.Error(), ":shop") || !strings.Contains(err.Error(), ":day, :from, :to and :tz") {
			t.Errorf("error = %v, want one naming :shop and the allowed parameters", err)
		}
	})
	t.Run("custom_query_needs_no_parameter", func(t *testing.T) {
		q, err := CustomQuery("SELECT link_id, clicks FROM today")
		if err != nil {
			t.Fatal(err)
		}
		if q.Name() != "custom" {
			t.Errorf("Name() = %q, want custom", q.Name())
		}
	})
}

func TestClickCount(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		want    int64
		wantErr string
	}{
		{"integer", int64(7), 7, ""},
		{"zero", int64(0), 0, ""},
		{"numeric_from_postgres_sum", []byte("12"), 12, ""},
		{"numeric_with_zero_fraction", []byte("12.000"), 12, ""},
		{"whole_float_from_sqlite_total", float64(3), 3, ""},
		{"text_number", "5", 5, ""},
		{"negative", int64(-1), 0, "negative"},
		{"fraction", 2.5, 0, "not a whole number"},
		{"numeric_fraction", []byte("2.5"), 0, "not a whole number"},
		{"null", nil, 0, "NULL"},
		{"text", "many", 0, "not a whole number"},
		{"boolean", true, 0, "not a number"},
		{"largest_believable", int64(MaxClicks), MaxClicks, ""},
		{"int64_max", int64(9223372036854775807), 0, "more clicks than"},
		{"just_past_believable", int64(MaxClicks + 1), 0, "more clicks than"},
		{"numeric_past_int64", []byte("18446744073709551614"), 0, "more clicks than"},
		{"text_int64_max", "9223372036854775807", 0, "more clicks than"},
		{"huge_float", 1e300, 0, "more clicks than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := clickCount(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("clickCount(%#v) = %d, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("clickCount(%#v) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}
