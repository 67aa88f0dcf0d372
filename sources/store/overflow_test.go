package store

import (
	"errors"
	"testing"
)

// A count no store can hold, or clicks that add up past it, make the day's
// read fail (the day is unverifiable), never a wrapped or absurd number.
func TestCountsOverflow(t *testing.T) {
	tests := []struct {
		name     string
		postgres string
		sqlite   string
	}{
		{
			name:     "int64_max_in_one_row",
			postgres: "SELECT 'a' AS link_id, 9223372036854775807::bigint AS clicks",
			sqlite:   "SELECT 'a' AS link_id, 9223372036854775807 AS clicks",
		},
		{
			name:     "rows_add_up_past_int64",
			postgres: "SELECT v.link_id, v.clicks FROM (VALUES ('a', 4611686018427387904::bigint), ('b', 4611686018427387904::bigint)) AS v (link_id, clicks)",
			sqlite:   "SELECT 'a' AS link_id, 4611686018427387904 AS clicks UNION ALL SELECT 'b', 4611686018427387904",
		},
		{
			name:     "rows_add_up_past_the_believable",
			postgres: "SELECT v.link_id, v.clicks FROM (VALUES ('a', 9007199254740992::bigint), ('a', 1::bigint)) AS v (link_id, clicks)",
			sqlite:   "SELECT 'a' AS link_id, 9007199254740992 AS clicks UNION ALL SELECT 'a', 1",
		},
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			_, dsn := b.new(t)
			s := openStore(t, dsn)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					text := tt.postgres
					if b.name == "sqlite" || b.name == "mysql" { // plain SQL
						text = tt.sqlite
					}
					q := mustQuery(t)(CustomQuery(text))
					got, err := s.Counts(t.Context(), q, mustDate(t, "2026-11-26"), mustZone(t, "UTC"))
					if err == nil {
						t.Fatalf("Counts = %+v, want an error", got)
					}
					if !errors.Is(err, ErrBadQuery) {
						t.Errorf("error %v is not ErrBadQuery", err)
					}
					errorContains(t, err, "more clicks than", "2026-11-26")
				})
			}
		})
	}
}
