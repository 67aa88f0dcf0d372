package storage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Every query parameter an s3:// URL took when it was opened through
// gocloud.dev/blob opens the bucket as before; an unknown parameter, or a
// bad value, is an error naming it.
func TestS3QueryParameters(t *testing.T) {
	s := newS3(t)
	ctx := context.Background()
	if err := os.WriteFile(os.Getenv("AWS_CONFIG_FILE"), []byte("[profile reports]\nregion = eu-central-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"region=eu-central-1",
		"region=eu-central-1&profile=reports&dualstack=true&fips=false&accelerate=false&anonymous=false",
		"region=eu-central-1&rate_limiter_capacity=100&request_checksum_calculation=when_required&response_checksum_validation=WHEN_SUPPORTED",
		"region=eu-central-1&ssetype=aws:kms&kmskeyid=key-1&awssdk=v2",
		"region=eu-central-1&role=arn:aws:iam::123456789012:role/r&role_session_name=s&role_duration=15m&role_external_id=x",
		"region=eu-central-1&endpoint=minio.example.internal:9000&disable_https=true&s3ForcePathStyle=true&hostname_immutable=true",
	} {
		d, err := Open(ctx, "s3://reports/r?"+q)
		if err != nil {
			t.Errorf("?%s: %v", q, err)
			continue
		}
		d.Close()
	}
	for q, want := range map[string]string{
		"region=eu-central-1&prefixx=a":                      `unknown query parameter "prefixx"`,
		"region=eu-central-1&use_path_style=maybe":           `invalid value for "use_path_style"`,
		"region=eu-central-1&ssetype=rot13":                  `invalid value for "ssetype"`,
		"region=eu-central-1&role=admin":                     `invalid value for "role"`,
		"region=eu-central-1&role_session_name=s":            `need "role"`,
		"region=eu-central-1&region=us-east-1":               `"region" is given 2 times`,
		"region=eu-central-1&request_checksum_calculation=x": `want when_supported or when_required`,
	} {
		if _, err := Open(ctx, "s3://reports/r?"+q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("?%s: error %v, want %q", q, err, want)
		}
	}

	// s3ForcePathStyle, the older name, puts the bucket in the path as
	// use_path_style does: a report is written and read back.
	q := url.Values{"endpoint": {s.url}, "s3ForcePathStyle": {"true"}, "region": {"eu-central-1"}}
	r := sample(t)
	if _, err := Write("s3://reports/old?"+q.Encode(), r); err != nil {
		t.Fatal(err)
	}
	if back, err := ReadReport(ctx, "s3://reports/old/"+r.RunKey+"?"+q.Encode()); err != nil || back.RunKey != r.RunKey {
		t.Errorf("ReadReport: %q, %v", back.RunKey, err)
	}
}

// A workload identity (EKS IRSA: a web identity token file and a role)
// gives the credentials the S3 requests are signed with, through STS.
func TestS3CredentialsFromAWebIdentity(t *testing.T) {
	s := newS3(t)
	var mu sync.Mutex
	var tokens []string
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		tokens = append(tokens, r.Form.Get("Action")+" "+r.Form.Get("WebIdentityToken"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(`<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>AKIDFROMIRSA</AccessKeyId>
<SecretAccessKey>secret</SecretAccessKey><SessionToken>session</SessionToken>
<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult>
</AssumeRoleWithWebIdentityResponse>`))
	}))
	t.Cleanup(sts.Close)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("projected-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/clickrecon")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	var signed []string
	s.beforePut = func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		signed = append(signed, r.Header.Get("Authorization"))
		mu.Unlock()
		return false
	}
	if _, err := Write(s.dest("r"), sample(t)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) == 0 || tokens[0] != "AssumeRoleWithWebIdentity projected-token" {
		t.Errorf("STS got %q, want AssumeRoleWithWebIdentity with the token file's token", tokens)
	}
	if len(signed) == 0 || !strings.Contains(signed[0], "Credential=AKIDFROMIRSA/") {
		t.Errorf("the PUTs were signed %q, want with the web identity's credentials", signed)
	}
}
