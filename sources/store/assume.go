package store

import (
	"context"
	"fmt"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// Assumption is something the store's counts rest on that clickrecon
// cannot check, said in clickrecon check and in each run's report (a
// finding of Kind): the counts are right only if it holds.
type Assumption struct {
	Kind    string
	Message string
}

// AssumedRowSecurity is the Kind of the assumption that the rows a
// PostgreSQL row-level security policy lets STORE_DSN's role see are
// every click.
const AssumedRowSecurity = "row_security"

// Assumptions reads what the counts of q on s, for a run in loc
// (RECON_TZ), rest on that cannot be checked: the zone a custom query's
// session runs in (customZone), and row-level security (rowSecurity). It
// reads the catalog only.
func (s *Store) Assumptions(ctx context.Context, q Query, loc *time.Location) ([]Assumption, error) {
	var out []Assumption
	if q.name == nameCustom || q.total.name == nameCustom {
		z, err := s.customZone(ctx, loc)
		if err != nil {
			return nil, err
		}
		if z.zone != nil {
			out = append(out, Assumption{Kind: AssumedQueryZone, Message: z.note()})
		}
	}
	rls, err := s.rowSecurity(ctx, q)
	if err != nil {
		return nil, err
	}
	return append(out, rls...), nil
}

// rowSecuritySQL lists the tables whose rows STORE_DSN's role sees
// through PostgreSQL's row-level security: row security on
// (relrowsecurity), and not bypassed, as the server decides it
// (check_enable_rls): the role is not a superuser, has not BYPASSRLS, and
// is not the table's owner (or a member of its role) unless the owner is
// held to it too (relforcerowsecurity). $1 is the preset's table; "" (a
// custom query, whose tables are its author's) lists every such table on
// the search_path the role may read. For each: the policies that let the
// role read rows (FOR SELECT or ALL, to PUBLIC or a role it is a member
// of), "" when none does and it sees no row at all.
const rowSecuritySQL = `SELECT c.oid::regclass::text, current_user::text,
       coalesce((SELECT string_agg(quote_ident(p.polname), ', ' ORDER BY p.polname)
                 FROM pg_catalog.pg_policy p
                 WHERE p.polrelid = c.oid AND p.polcmd IN ('r', '*') AND p.polpermissive
                   AND EXISTS (SELECT 1 FROM unnest(p.polroles) AS r(oid)
                               WHERE CASE WHEN r.oid = 0 THEN true ELSE pg_catalog.pg_has_role(r.oid, 'USAGE') END)), '')
FROM pg_catalog.pg_class c
WHERE c.relrowsecurity AND c.relkind IN ('r', 'p')
  AND NOT (SELECT r.rolsuper OR r.rolbypassrls FROM pg_catalog.pg_roles r WHERE r.rolname = current_user)
  AND (c.relforcerowsecurity OR NOT pg_catalog.pg_has_role(c.relowner, 'USAGE'))
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
  AND CASE WHEN $1 <> '' THEN c.oid = to_regclass($1)
           ELSE c.relnamespace::regnamespace::text = ANY (current_schemas(false)) END
ORDER BY 1`

// rowSecurity says, on PostgreSQL, which tables q reads (the preset's;
// for a custom query, every table on the search_path) STORE_DSN's role
// sees only part of, under row-level security it does not bypass: a
// click a policy hides looks missing, and nothing but the policy can tell.
func (s *Store) rowSecurity(ctx context.Context, q Query) ([]Assumption, error) {
	if s.dialect != dsn.Postgres {
		return nil, nil
	}
	table := ""
	switch q.name {
	case PresetEvents:
		table = "clicks"
	case PresetDaily:
		table = "click_counts"
	}
	rows, err := s.db.QueryContext(ctx, rowSecuritySQL, table)
	if err != nil {
		return nil, fmt.Errorf("read whether row-level security applies to the store's role: %w", classify(err))
	}
	defer rows.Close()
	var out []Assumption
	for rows.Next() {
		var name, role, policies string
		if err := rows.Scan(&name, &role, &policies); err != nil {
			return nil, err
		}
		what := "the counts are of the rows its policies let the role see (" + policies + ")"
		if policies == "" {
			what = "no policy lets the role read a row of it, so it counts none"
		}
		verb := "reads"
		if table == "" {
			verb = "may read"
		}
		out = append(out, Assumption{Kind: AssumedRowSecurity, Message: fmt.Sprintf(
			"table %s, which the store query %s, has row-level security on, and STORE_DSN's role %s does not bypass it: %s; "+
				"a click a policy hides from the role looks missing. If the role is to see every click, give it BYPASSRLS or a policy FOR SELECT USING (true)",
			name, verb, role, what)})
	}
	return out, rows.Err()
}
