package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
)

// Links a daily counter merges
//
// A daily store keyed by a collation that is not byte-wise (MariaDB's
// default utf8mb4_general_ci, a nondeterministic ICU collation, citext,
// SQLite's NOCASE) adds into one counter the clicks of links the
// collation calls equal: Elido's lnk_A and lnk_a, lnk_b and "lnk_b ". Such
// links are rare among a day's, so the day's per-link counts are read as
// they are, and MergedLinks asks the server which of the links that
// differ its column calls equal to another link of the day: those, and
// only those, cannot be counted one by one. Which strings a collation
// calls equal is the server's to say (its version, its ICU, its pad
// attribute), never guessed here.

// Merged are the links of a day that the store's link_id column keeps as
// one counter: each group holds two or more link ids, different bytes
// that the column's collation calls equal. Column names the column and
// its collation, for the report.
type Merged struct {
	Column string
	Groups [][]string
	hint   string // the collations that would keep them apart
}

// mergeChunk bounds the link ids of one statement on MySQL and SQLite
// (a bound parameter each on MySQL); a group is made of pairs, so chunks
// find the same groups as one statement.
const mergeChunk = 500

// MergedLinks returns, for a daily store keyed by a collation that is not
// byte-wise, the groups of links that the column calls equal, among ids
// (the day's links that differ) and the store's rows of day: every id
// equal to a row of another spelling, with that row. Nil for any other
// query or column: its per-link counts are byte for byte.
func (s *Store) MergedLinks(ctx context.Context, q Query, day reconcile.Date, ids []string) (Merged, error) {
	if q.name != PresetDaily || len(ids) == 0 {
		return Merged{}, nil
	}
	s.mu.Lock()
	cols, err := s.columnsOf(ctx, "click_counts")
	s.mu.Unlock()
	if err != nil {
		return Merged{}, err
	}
	c, ok := cols["link_id"]
	if !ok || c.byteWise || c.fixed() {
		return Merged{}, nil
	}
	m := Merged{Column: c.String() + " has " + c.what(), hint: byteWiseHint(s.dialect)}
	pairs, err := s.equalPairs(ctx, c, day, ids)
	if err != nil {
		return Merged{}, fmt.Errorf("ask the store which links %s calls equal on %s: %w", m.Column, day, err)
	}
	m.Groups = groups(pairs)
	return m, nil
}

// what names the collation or type that decides which of c's values are
// one.
func (c TextColumn) what() string {
	if c.Collation == "" || strings.EqualFold(c.Type, "citext") {
		return "type " + c.Type
	}
	return "collation " + c.Collation
}

// equalPairs returns each (id, row) where id, one of ids, and row, the
// link_id of a row of day, are equal under c's collation, as the server
// compares them.
func (s *Store) equalPairs(ctx context.Context, c TextColumn, day reconcile.Date, ids []string) ([][2]string, error) {
	var pairs [][2]string
	err := s.readOnly(ctx, func(tx *sqlx.Tx) error {
		switch s.dialect {
		case dsn.Postgres:
			return s.collect(ctx, tx, pgEqualSQL(c), &pairs, pq.Array(ids), day.String())
		case dsn.MySQL:
			if !mysqlName.MatchString(c.Charset) || !mysqlName.MatchString(c.Collation) {
				return fmt.Errorf("%w: the collation %s of %s cannot be named in a statement", ErrNotByteWise, c.Collation, c)
			}
		case dsn.SQLite:
			if !mysqlName.MatchString(c.Collation) {
				return fmt.Errorf("%w: the collation %s of %s cannot be named in a statement", ErrNotByteWise, c.Collation, c)
			}
		}
		for chunk := range slices.Chunk(ids, mergeChunk) {
			var err error
			if s.dialect == dsn.MySQL {
				args := make([]any, 0, len(chunk)+1)
				for _, id := range chunk {
					args = append(args, id)
				}
				err = s.collect(ctx, tx, mysqlEqualSQL(c, len(chunk)), &pairs, append(args, day.String())...)
			} else {
				list, jerr := json.Marshal(chunk)
				if jerr != nil {
					return jerr
				}
				err = s.collect(ctx, tx, sqliteEqualSQL(c), &pairs, string(list), day.String())
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return pairs, err
}

// pgEqualSQL joins the ids ($1, a text[]) to the day's ($2) rows, compared
// as the column compares: its own collation wins over the parameter's
// default one; a citext column compares as citext.
func pgEqualSQL(c TextColumn) string {
	id := "d.id"
	if strings.EqualFold(c.Type, "citext") {
		id = "d.id::citext"
	}
	return `SELECT d.id, c.link_id::text FROM unnest($1::text[]) AS d(id)
JOIN click_counts c ON c.link_id = ` + id + `
WHERE c.day = $2::date`
}

// mysqlEqualSQL joins n ids, bound one by one, to the day's rows (the last
// parameter), each id converted into the column's character set and
// compared in its collation. Each id is cast to VARCHAR: a bound string
// comes as CHAR, which the derived table would keep without its trailing
// spaces ("lnk_b " read back as lnk_b).
func mysqlEqualSQL(c TextColumn, n int) string {
	sel := strings.TrimSuffix(strings.Repeat("SELECT CAST(? AS CHAR CHARACTER SET utf8mb4) AS id UNION ALL ", n), " UNION ALL ")
	return `SELECT d.id, c.link_id FROM (` + sel + `) AS d
JOIN click_counts c ON c.link_id = CONVERT(d.id USING ` + c.Charset + `) COLLATE ` + c.Collation + `
WHERE c.day = ?`
}

// sqliteEqualSQL joins the ids (?1, a JSON array) to the day's rows (?2),
// compared in the collation the counter's unique key uses.
func sqliteEqualSQL(c TextColumn) string {
	return `SELECT d.value, c.link_id FROM json_each(?1) AS d
JOIN click_counts c ON c.link_id = d.value COLLATE ` + c.Collation + `
WHERE c.day = ?2`
}

// collect runs query on tx and appends its rows, (id, row) pairs, to pairs.
func (s *Store) collect(ctx context.Context, tx *sqlx.Tx, query string, pairs *[][2]string, args ...any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, row string
		if err := rows.Scan(&id, &row); err != nil {
			return err
		}
		*pairs = append(*pairs, [2]string{id, row})
	}
	return classify(rows.Err())
}

// groups joins the pairs of different bytes that were found equal into
// groups, each sorted, in the order of their first id.
func groups(pairs [][2]string) [][]string {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok || p == x {
			parent[x] = x
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	for _, p := range pairs {
		if p[0] == p[1] {
			continue // the same bytes: the link's own row
		}
		a, b := find(p[0]), find(p[1])
		if a != b {
			parent[b] = a
		}
	}
	byRoot := map[string][]string{}
	for x := range parent {
		r := find(x)
		byRoot[r] = append(byRoot[r], x)
	}
	var out [][]string
	for _, g := range byRoot {
		if len(g) > 1 {
			slices.Sort(g)
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}
