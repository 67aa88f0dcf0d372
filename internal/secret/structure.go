package secret

import (
	"regexp"
	"strings"
)

// structural replaces by mask what holds a secret by its place in s,
// whatever its value: see Redact.
func structural(s, mask string) string {
	s = userinfo.ReplaceAllStringFunc(s, func(m string) string { return redactUserinfo(m, mask) })
	s = driverForm.ReplaceAllString(s, "${1}:"+mask+"@${2}")
	s = replaceGroup(keyValue, s, 3, mask, named)
	s = replaceGroup(jsonField, s, 2, mask, named)
	s = replaceGroup(authHeader, s, 4, mask, credential)
	s = replaceGroup(bearer, s, 2, mask, credential)
	s = slackToken.ReplaceAllString(s, mask)
	return slackHook.ReplaceAllString(s, "${1}"+mask)
}

// userinfo matches a URL from its scheme to the end of the token it is
// written in (a space or a quote ends it).
var userinfo = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'`<>]+")

// redactUserinfo replaces the password of the URL u, if it has one. The
// userinfo ends at the last @ of the authority (the part before the first
// /, ? or #); when there is none there, at the last @ of the token, for a
// password written with an unencoded / or # (postgres://u:p/w@host,
// postgres://u:p@ss#1@host), at the last @ of the token that is not in
// its query, unless what follows the colon is a port.
func redactUserinfo(u, mask string) string {
	i := strings.Index(u, "://") + 3
	rest := u[i:]
	auth := rest
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		auth = rest[:end]
	}
	at := strings.LastIndex(auth, "@")
	if last := strings.LastIndex(rest, "@"); last >= len(auth) && !strings.Contains(rest[len(auth):last], "?") {
		_, after, ok := strings.Cut(auth, ":")
		if at < 0 && (!ok || !isPort(after)) || at >= 0 && strings.Contains(rest[len(auth):last], "#") {
			at = last
		}
	}
	if at < 0 {
		return u
	}
	user, pw, ok := strings.Cut(rest[:at], ":")
	if !ok || pw == "" || pw == mask {
		return u
	}
	return u[:i] + user + ":" + mask + rest[at:]
}

// replaceGroup replaces by mask the group g of every match of re in s
// for which secret(name, value) holds (name is group 1), unless the value is empty or
// already the mask. A value of an unquoted name=value that ends in
// punctuation followed by a space (a colon, a comma) keeps it.
func replaceGroup(re *regexp.Regexp, s string, g int, mask string, secret func(name, value string) bool) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		vs, ve := m[2*g], m[2*g+1]
		if ve-vs > 1 && strings.ContainsRune(":,;.)]", rune(s[ve-1])) && (ve == len(s) || s[ve] == ' ' || s[ve] == '\n') {
			ve-- // punctuation after the value, not part of it
		}
		if vs == ve || strings.HasPrefix(s[vs:], mask) || !secret(s[m[2]:m[3]], s[vs:ve]) {
			continue
		}
		b.WriteString(s[last:vs])
		b.WriteString(mask)
		last = ve
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isPort(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// driverForm matches the user and password of a DSN in the MySQL
// driver's form, user:password@tcp(...) or @unix(...).
var driverForm = regexp.MustCompile(`([^\s:/@"']*):[^\s"']*@((?:tcp|tcp6|unix)\()`)

// keyValue matches name=value, as in a query string or a key=value DSN;
// the value may be quoted.
var keyValue = regexp.MustCompile(`([A-Za-z][\w.-]*)(\s*=\s*)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&"'<>]*)`)

// jsonField matches "name": "value".
var jsonField = regexp.MustCompile(`"([A-Za-z][\w.-]*)"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// authHeader matches an Authorization (or API key) header's credentials,
// also as Go prints an http.Header (Authorization:[Bearer …]).
var authHeader = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-auth-token)(\s*[:=]\s*\[?)((?:bearer|basic|token|digest)\s+)?([^\s,;"'\]]+)`)

// bearer matches the credentials of "Bearer …" wherever it is written.
var bearer = regexp.MustCompile(`(?i)\b(bearer\s+)([A-Za-z0-9\-._~+/]+=*)`)

// credential says a header's or Bearer's value looks like a credential,
// not a word: it holds a digit or one of ._~+/=- ("Bearer abc.def", not
// "bearer token" or "authorization: the key is missing").
func credential(_, v string) bool { return strings.ContainsAny(v, "0123456789._~+/=-") }

// named says a name=value's or a field's name is a secret's.
func named(name, _ string) bool { return secretName(name) }

// slackToken matches a Slack token (bot, user, app, refresh).
var slackToken = regexp.MustCompile(`\bxox[a-z]-[A-Za-z0-9-]+`)

// slackHook matches the path of a Slack incoming webhook, its secret.
var slackHook = regexp.MustCompile("(hooks\\.slack\\.com/services/)[^\\s\"'`<>]+")

// secretName reports whether a field, query parameter or key=value name
// holds a secret: a password, token, signature, credential or key
// (X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token, sig,
// access_token, api_key, sslpassword, client_secret, …).
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, part := range []string{"password", "passwd", "secret", "token", "signature", "credential", "apikey", "api_key", "api-key", "access_key", "accesskey"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	switch n {
	case "pwd", "pass", "sig", "key", "auth":
		return true
	}
	return false
}
