package dsn

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{"url_password", "postgres://app:s3cr3t@db.internal:5432/clicks?sslmode=require", "postgres://app:xxxxx@db.internal:5432/clicks?sslmode=require"},
		{"percent_encoded_password", "postgresql://app:p%40ss%2Fw0rd@db/clicks", "postgresql://app:xxxxx@db/clicks"},
		{"password_in_query", "postgres://app@db/clicks?password=s3cr3t&sslmode=disable", "postgres://app@db/clicks?password=xxxxx&sslmode=disable"},
		{"no_password", "postgres://app@db/clicks", "postgres://app@db/clicks"},
		{"sqlite_path", "sqlite:/data/clicks.db", "sqlite:/data/clicks.db"},
		{"relative_sqlite_path", "sqlite:clicks.db", "sqlite:clicks.db"},
		{"unparseable_url_with_password", "postgres://app:s3#cr3t@db/clicks", "postgres://xxxxx@db/clicks"},
		{"unescaped_at_in_password", "postgres://app:p@ss@db/clicks", "postgres://app:xxxxx@db/clicks"},
		// These parse as URLs, but wrongly: the password ends up in the
		// host, and the rest in a fragment, a query or the path.
		{"digits_then_hash_in_password", "postgres://recon:1234#Abc@127.0.0.1:5432/clicks", "postgres://xxxxx@127.0.0.1:5432/clicks"},
		{"digits_then_question_mark_in_password", "postgres://recon:1234?Abc@db/clicks", "postgres://xxxxx@db/clicks"},
		{"digits_then_slash_in_password", "postgresql://recon:99/x@db/clicks", "postgresql://xxxxx@db/clicks"},
		{"at_then_hash_in_password", "postgres://recon:p@ss#1@127.0.0.1:5432/clicks", "postgres://xxxxx@127.0.0.1:5432/clicks"},
		{"at_then_slash_in_password", "postgres://recon:a@b/c@db/clicks", "postgres://xxxxx@db/clicks"},
		{"at_in_a_query_value", "postgres://db:5432/clicks?user=recon@myserver&password=s3cr3t", "postgres://db:5432/clicks?password=xxxxx&user=recon%40myserver"},
		{"key_value_form", "host=db user=app password=s3cr3t dbname=clicks", "host=db user=app password=xxxxx dbname=clicks"},
		{"key_value_quoted_password", "host=db password='s3 cr3t' dbname=clicks", "host=db password=xxxxx dbname=clicks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Redact(tt.raw)); diff != "" {
				t.Errorf("Redact(%q) (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

func TestRedactError(t *testing.T) {
	cause := fmt.Errorf("connect to app:s3cr3t@db as s3cr%%23t: %w", fs.ErrPermission)
	secrets := []string{"", "s3cr3t", "s3cr%23t"}

	err := RedactError(cause, secrets)
	if diff := cmp.Diff("connect to app:xxxxx@db as xxxxx: permission denied", err.Error()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Error("the redacted error lost its chain")
	}
	if !errors.Is(err, cause) {
		t.Error("the redacted error does not wrap the original")
	}

	clean := errors.New("connection refused")
	if got := RedactError(clean, secrets); got != clean {
		t.Errorf("an error without secrets came back as %#v, want it unchanged", got)
	}
}
