package config

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The fleet file in YAML: a list of workspaces, each a mapping. Every
// key is a variable's name (ELIDO_WORKSPACE_ID), or the same in lower
// case, with or without its prefix (workspace_id, tz, preset, fail_on,
// channel); secrets are files, under secrets: (api_key, store_dsn,
// slack_webhook_url, slack_bot_token: each NAME_FILE) or as a *_file key;
// settings: (or env:) holds variables by name:
//
//	workspaces:
//	  - name: acme
//	    workspace_id: "48213"
//	    secrets:
//	      api_key: /var/run/secrets/clickrecon/acme-elido-api-key
//	      store_dsn: /var/run/secrets/clickrecon/acme-store-dsn
//	  - name: brand-b
//	    workspace_id: "51770"
//	    tz: America/New_York
//	    secrets:
//	      api_key: /var/run/secrets/clickrecon/brand-b-elido-api-key
//	      store_dsn: /var/run/secrets/clickrecon/brand-b-store-dsn
//	      slack_webhook_url: /var/run/secrets/clickrecon/brand-b-slack-webhook-url
//
// The list may also stand alone, or be a mapping of names to entries
// (their order the file's).

// varPrefixes are the prefixes a key in lower case may leave out, in the
// order they are tried.
var varPrefixes = []string{"", "RECON_", "ELIDO_", "STORE_", "SLACK_"}

// varOf returns the variable a YAML key names among known: the key
// itself in upper case, or with one of varPrefixes. A key two variables
// could be is an error, as is one that is none.
func varOf(key string, known map[string]bool) (string, error) {
	up := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(key), "-", "_"))
	if known[up] {
		return up, nil
	}
	var found []string
	for _, p := range varPrefixes[1:] {
		if known[p+up] {
			found = append(found, p+up)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%s is not a clickrecon variable (docs/contract.md lists them)", key)
	}
	return "", fmt.Errorf("%s could be %s: write the variable's name", key, strings.Join(found, " or "))
}

// secretOf returns the NAME_FILE variable a key under secrets: names.
func secretOf(key string) (string, error) {
	up := strings.TrimSuffix(strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(key), "-", "_")), "_FILE")
	var found []string
	for _, p := range varPrefixes {
		if slices.Contains(secretVars, p+up) {
			found = append(found, p+up+"_FILE")
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	var names []string
	for _, s := range secretVars {
		names = append(names, strings.ToLower(s))
	}
	return "", fmt.Errorf("secrets: %s is not a secret of clickrecon's: one of %s, each the path of its file", key, strings.Join(names, ", "))
}

// yamlLine is a line only YAML has: a list item, or a key and a colon.
var yamlLine = regexp.MustCompile(`^\s*(-(\s|$)|[A-Za-z0-9_.-]+\s*:(\s|$))`)

// looksINI reports whether text is a fleet file of [name] sections: no
// line that is not a comment is a YAML list item or "key:".
func looksINI(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") && yamlLine.MatchString(line) {
			return false
		}
	}
	return strings.Contains(text, "[")
}

// parseYAML reads the entries of a YAML fleet file; bad says what is
// wrong with a line.
func parseYAML(text []byte, known map[string]bool, bad func(line int, format string, args ...any)) []Entry {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		bad(0, "not a fleet file: %v (a YAML list of workspaces, or [name] sections)", err)
		return nil
	}
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.MappingNode {
		if v := mapValue(top, "workspaces"); v != nil {
			top = v
		}
	}
	var entries []Entry
	switch top.Kind {
	case yaml.SequenceNode:
		for _, n := range top.Content {
			entries = append(entries, yamlEntry(n, "", known, bad))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(top.Content); i += 2 {
			entries = append(entries, yamlEntry(top.Content[i+1], top.Content[i].Value, known, bad))
		}
	default:
		bad(top.Line, "a fleet file is a list of workspaces (workspaces: then - name: ...), not %s", kindName(top))
	}
	return entries
}

// yamlEntry reads one workspace; name is its key when the file maps names
// to entries.
func yamlEntry(n *yaml.Node, name string, known map[string]bool, bad func(line int, format string, args ...any)) Entry {
	e := Entry{Name: name, Vars: map[string]string{}, Line: n.Line}
	if n.Kind != yaml.MappingNode {
		bad(n.Line, "a workspace is a mapping (name: ..., workspace_id: ...), not %s", kindName(n))
		return e
	}
	set := func(line int, v string, value *yaml.Node) {
		s, err := scalar(value)
		if err != nil {
			bad(line, "workspace %q: %s: %v", e.Name, v, err)
			return
		}
		if slices.Contains(notPerEntry, v) {
			bad(line, "%s is the fleet's own, not a workspace's", v)
			return
		}
		if _, twice := e.Vars[v]; twice {
			bad(line, "workspace %q sets %s twice", e.Name, v)
		}
		e.Vars[v] = s
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch strings.ToLower(k.Value) {
		case "name":
			e.Name = strings.TrimSpace(v.Value)
			e.Line = k.Line
		case "report_prefix":
			// The folder under the shared RECON_REPORT_DIR its reports
			// go to, instead of its name.
			e.Prefix = strings.Trim(strings.TrimSpace(v.Value), "/")
		case "secrets":
			for j := 0; v.Kind == yaml.MappingNode && j+1 < len(v.Content); j += 2 {
				name, err := secretOf(v.Content[j].Value)
				if err != nil {
					// A setting kept beside the secrets (the Slack
					// channel, say) is a setting, its value as written.
					var verr error
					if name, verr = varOf(v.Content[j].Value, known); verr != nil {
						bad(v.Content[j].Line, "workspace %q: %v", e.Name, err)
						continue
					}
				}
				set(v.Content[j].Line, name, v.Content[j+1])
			}
			if v.Kind != yaml.MappingNode {
				bad(v.Line, "workspace %q: secrets: is a mapping (api_key: /path/of/its/file, ...)", e.Name)
			}
		case "settings", "env", "variables":
			for j := 0; v.Kind == yaml.MappingNode && j+1 < len(v.Content); j += 2 {
				name, err := varOf(v.Content[j].Value, known)
				if err != nil {
					bad(v.Content[j].Line, "workspace %q: %v", e.Name, err)
					continue
				}
				set(v.Content[j].Line, name, v.Content[j+1])
			}
			if v.Kind != yaml.MappingNode {
				bad(v.Line, "workspace %q: %s: is a mapping of variables", e.Name, k.Value)
			}
		default:
			name, err := varOf(k.Value, known)
			if err != nil {
				bad(k.Line, "workspace %q: %v", e.Name, err)
				continue
			}
			set(k.Line, name, v)
		}
	}
	return e
}

// scalar is a value as a variable holds it: a string, number or boolean
// as written; null is empty.
func scalar(n *yaml.Node) (string, error) {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return "", nil
	case n.Kind == yaml.ScalarNode:
		return strings.TrimSpace(n.Value), nil
	}
	return "", errors.New("a value is a string, a number or true/false, not " + kindName(n))
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return fmt.Sprintf("%q", n.Value)
}
