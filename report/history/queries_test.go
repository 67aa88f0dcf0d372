package history

import (
	"io/fs"
	"regexp"
	"testing"
)

// TestSharedQueriesHoldOnlyPlaceholders checks what sharedFor assumes: a
// statement of queries/shared/ has no $ but its $N placeholders, and no
// SQLite ? of its own, so that making $N ?N is all SQLite needs.
func TestSharedQueriesHoldOnlyPlaceholders(t *testing.T) {
	t.Parallel()
	other := regexp.MustCompile(`\$[^0-9]|\$$|\?`)
	files, err := fs.Glob(queryFiles, "queries/shared/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shared queries: %v", err)
	}
	for _, f := range files {
		b, err := fs.ReadFile(queryFiles, f)
		if err != nil {
			t.Fatal(err)
		}
		if loc := other.FindIndex(b); loc != nil {
			t.Errorf("%s: %q at byte %d: a shared statement holds only $N placeholders; move it to queries/<dialect>/", f, b[loc[0]:loc[1]], loc[0])
		}
	}
}
