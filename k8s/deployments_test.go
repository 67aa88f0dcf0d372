package k8s

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// operationsFile lists the documented deployment variants and the keys of
// each one's Secret.
const operationsFile = "../docs/operations.md"

// variant is one row of the documentation's table of deployments.
type variant struct {
	name       string
	components []string
	settings   map[string]string // the ConfigMap patch the variant needs
	keys       []string          // the Secret's keys
}

// documentedVariants reads the table between the variants markers of
// docs/operations.md.
func documentedVariants(t *testing.T) []variant {
	t.Helper()
	raw, err := os.ReadFile(operationsFile)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "<!-- variants")
	table, _, ok2 := strings.Cut(table, "<!-- /variants -->")
	if !ok || !ok2 {
		t.Fatalf("%s has no table of variants between <!-- variants and <!-- /variants -->", operationsFile)
	}
	code := regexp.MustCompile("`([^`]*)`")
	spans := func(cell string) []string {
		var out []string
		for _, m := range code.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		return out
	}
	var vs []variant
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 4 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.TrimSpace(cells[0]) == "variant" {
			continue
		}
		v := variant{name: strings.TrimSpace(cells[0]), components: spans(cells[1]), settings: map[string]string{}, keys: spans(cells[3])}
		for _, s := range spans(cells[2]) {
			name, value, ok := strings.Cut(s, ": ")
			if !ok {
				t.Fatalf("variant %q: ConfigMap setting %q is not NAME: value", v.name, s)
			}
			v.settings[name] = value
		}
		vs = append(vs, v)
	}
	if len(vs) < 5 {
		t.Fatalf("%s lists %d variants", operationsFile, len(vs))
	}
	return vs
}

// secretValues are what the test's Secret holds under each key the
// documentation may list: values of the right form, no placeholder.
var secretValues = map[string]string{
	"elido-api-key":     "sk_live_k8s_matrix_0123456789",
	"store-dsn":         "postgres://clickrecon_reader:pw@db.example.internal:5432/clicks?sslmode=require",
	"history-dsn":       "postgres://clickrecon_history:pw@db.example.internal:5432/clickrecon?sslmode=require",
	"slack-webhook-url": "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
	"slack-bot-token":   "xoxb-1-2-abcdef",
	"store-write-dsn":   "postgres://clickrecon_writer:pw@db.example.internal:5432/clicks?sslmode=require",
	"healthcheck-url":   "https://hc-ping.com/0f0e0d0c-0b0a-0908-0706-050403020100",
	// components/fleet's example workspaces.
	"acme-elido-api-key":    "sk_live_k8s_acme_0123456789",
	"acme-store-dsn":        "postgres://clickrecon_reader:pw@acme-db.example.internal:5432/clicks?sslmode=require",
	"brand-b-elido-api-key": "sk_live_k8s_brand_b_0123456789",
	"brand-b-store-dsn":     "postgres://clickrecon_reader:pw@b-db.example.internal:5432/clicks?sslmode=require",
}

// TestDocumentedDeploymentsValidate renders every deployment the
// documentation lists as a user applies it (the documented overlay with
// the variant's components and ConfigMap patch, built by kubectl
// kustomize), builds each container's environment and files from the
// rendered manifests (the ConfigMap, the container's env, the Secret's
// keys mounted as files where its volume is mounted, the other volumes as
// folders) with a Secret holding exactly the keys the documentation lists,
// and runs clickrecon's own validation over them: clickrecon check
// --offline with the container's arguments. Every variant must validate.
// The container's file system is a folder of the test's: paths in the
// environment are rewritten under it.
func TestDocumentedDeploymentsValidate(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is not installed, and CI is set: the documented deployments must be checked in CI")
		}
		t.Skip("kubectl is not installed: the documented deployments were not rendered")
	}
	bin := buildClickrecon(t)
	overlayText, err := os.ReadFile(overlayFile)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := os.ReadFile(operationsFile)
	if err != nil {
		t.Fatal(err)
	}
	shardedArgs := regexp.MustCompile(`value: (\["run", [^\]]*"--shard"[^\]]*\])`).FindSubmatch(ops)
	if shardedArgs == nil {
		t.Fatal("docs/operations.md shows no backfill args with --shard")
	}
	for _, v := range documentedVariants(t) {
		t.Run(strings.NewReplacer(" ", "_", ",", "", "(", "", ")", "").Replace(v.name), func(t *testing.T) {
			text := overlayWith(t, string(overlayText), v, string(shardedArgs[1]))
			out := buildOverlay(t, kubectl, overlayDir(t, text))
			var configMap *corev1.ConfigMap
			configMaps := map[string]*corev1.ConfigMap{}
			pods := map[string]podOf{}
			for i, doc := range splitDocuments(out) {
				obj, err := decodeObject(doc)
				if err != nil {
					t.Fatalf("document %d of the build: %v", i+1, err)
				}
				switch o := obj.(type) {
				case *corev1.ConfigMap:
					configMaps[o.Name] = o
					if o.Name == "clickrecon" {
						configMap = o
					}
				case *batchv1.CronJob:
					js := o.Spec.JobTemplate.Spec
					pods["CronJob "+o.Name] = podOf{spec: js.Template.Spec, indexed: js.CompletionMode != nil && *js.CompletionMode == batchv1.IndexedCompletion}
				case *batchv1.Job:
					pods["Job "+o.Name] = podOf{spec: o.Spec.Template.Spec, indexed: o.Spec.CompletionMode != nil && *o.Spec.CompletionMode == batchv1.IndexedCompletion}
				case *corev1.Pod:
					pods["Pod "+o.Name] = podOf{spec: o.Spec}
				case *corev1.Secret:
					t.Errorf("the build holds the Secret %s: the real one is created apart", o.Name)
				}
			}
			if configMap == nil || len(pods) == 0 {
				t.Fatal("the build has no ConfigMap or no pod")
			}
			for name, pod := range pods {
				pod.configMaps = configMaps
				for _, c := range append(pod.spec.InitContainers, pod.spec.Containers...) {
					t.Run(strings.ReplaceAll(name, " ", "_")+"/"+c.Name, func(t *testing.T) {
						validateContainer(t, bin, v, configMap, pod, c)
					})
				}
			}
		})
	}
}

// overlayDir writes text as the kustomization.yaml of deploy/clickrecon/
// in a folder of the test's, beside k8s/ (a link to this base), where the
// documented overlay's ../../k8s paths hold, and returns that folder.
func overlayDir(t *testing.T, text string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "deploy", "clickrecon")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(".")
	if err := os.Symlink(abs, filepath.Join(dir, "..", "..", "k8s")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildOverlay is kubectl kustomize dir.
func buildOverlay(t *testing.T, kubectl, dir string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	return out
}

// podOf is a pod template of the build, whether its Job is Indexed
// (Kubernetes then sets JOB_COMPLETION_INDEX), and the build's
// ConfigMaps, by name, which its volumes may mount.
type podOf struct {
	spec       corev1.PodSpec
	indexed    bool
	configMaps map[string]*corev1.ConfigMap
}

// overlayWith is the documented overlay with v's components in place of
// its own, v's settings added to its ConfigMap patch and, for a sliced
// backfill, the backfill's args as the documentation gives them.
func overlayWith(t *testing.T, text string, v variant, shardedArgs string) string {
	t.Helper()
	comps := "components:\n"
	for _, c := range v.components {
		comps += "  - ../../k8s/components/" + c + "\n"
	}
	if len(v.components) == 0 {
		comps = "components: []\n"
	}
	re := regexp.MustCompile(`(?m)^components:\n(?:  .*\n)*`)
	if !re.MatchString(text) {
		t.Fatal("the overlay has no components list")
	}
	text = re.ReplaceAllLiteralString(text, comps)
	settings := ""
	for name, value := range v.settings {
		settings += fmt.Sprintf("        %s: %q\n", name, value)
	}
	anchor := "        RECON_TZ: \"America/New_York\"\n"
	if !strings.Contains(text, anchor) {
		t.Fatalf("the overlay's ConfigMap patch has no %q", anchor)
	}
	text = strings.Replace(text, anchor, anchor+settings, 1)
	for _, c := range v.components {
		if c == "backfill-sharded" {
			re := regexp.MustCompile(`value: \["run", "--from"[^\]]*\]`)
			if !re.MatchString(text) {
				t.Fatal("the overlay has no backfill args")
			}
			text = re.ReplaceAllLiteralString(text, "value: "+shardedArgs)
		}
	}
	return text
}

// validateContainer builds c's environment and files as the kubelet
// would, under a folder of the test's, and runs clickrecon's validation
// of what c runs over them.
func validateContainer(t *testing.T, bin string, v variant, configMap *corev1.ConfigMap, pod podOf, c corev1.Container) {
	root := t.TempDir()
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil || from.ConfigMapRef.Name != configMap.Name {
			t.Fatalf("envFrom %+v: only the ConfigMap %s is known", from, configMap.Name)
		}
		for k, val := range configMap.Data {
			env[k] = val
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("env %s comes from %+v: the test does not know it", e.Name, e.ValueFrom)
		}
		env[e.Name] = e.Value
	}
	volumes := map[string]corev1.Volume{}
	for _, vol := range pod.spec.Volumes {
		volumes[vol.Name] = vol
	}
	var mounts, configFiles []string
	for _, m := range c.VolumeMounts {
		vol, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("mount %s names no volume", m.MountPath)
		}
		at := filepath.Join(root, m.MountPath)
		if err := os.MkdirAll(at, 0o755); err != nil {
			t.Fatal(err)
		}
		mounts = append(mounts, m.MountPath)
		if vol.ConfigMap != nil {
			cm, ok := pod.configMaps[vol.ConfigMap.Name]
			if !ok {
				t.Fatalf("the volume %s mounts the ConfigMap %s, which the build does not hold", vol.Name, vol.ConfigMap.Name)
			}
			for key, val := range cm.Data {
				if err := os.WriteFile(filepath.Join(at, key), []byte(val), 0o644); err != nil {
					t.Fatal(err)
				}
				configFiles = append(configFiles, filepath.Join(at, key))
			}
			continue
		}
		if vol.Secret == nil {
			continue
		}
		if vol.Secret.SecretName != "clickrecon" || len(vol.Secret.Items) > 0 {
			t.Fatalf("the Secret volume %+v: want the whole Secret clickrecon", vol.Secret)
		}
		for _, key := range v.keys {
			val, ok := secretValues[key]
			if !ok {
				t.Fatalf("the documentation lists the Secret key %q, which the test has no value for", key)
			}
			if err := os.WriteFile(filepath.Join(at, key), []byte(val+"\n"), 0o440); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Paths into a mount are paths under root, in the mounted ConfigMaps'
	// files (the fleet file's "key: /path" lines, or NAME = /path) as in
	// the environment.
	for _, f := range configFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`(?m)^(\s*[A-Za-z_]+\s*[=:]\s*)(/\S*)$`).ReplaceAllStringFunc(string(b), func(line string) string {
			at := strings.Index(line, "/")
			for _, m := range mounts {
				if v := line[at:]; v == m || strings.HasPrefix(v, m+"/") {
					return line[:at] + filepath.Join(root, v)
				}
			}
			return line
		})
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for k, val := range env {
		for _, m := range mounts {
			if val == m || strings.HasPrefix(val, m+"/") {
				env[k] = filepath.Join(root, val)
			}
		}
	}
	if pod.indexed {
		env["JOB_COMPLETION_INDEX"] = "0"
	}
	args := c.Args
	for i, a := range args {
		args[i] = regexp.MustCompile(`\$\(([A-Z_]+)\)`).ReplaceAllStringFunc(a, func(m string) string {
			return env[m[2:len(m)-1]]
		})
	}
	var checkArgs []string
	switch {
	case len(args) > 0 && (args[0] == "run" || args[0] == "check"):
		checkArgs = append([]string{"check", "--offline"}, args[1:]...)
	case len(args) == 1 && args[0] == "migrate":
		if env["HISTORY_DSN_FILE"] == "" {
			t.Fatal("migrate runs without HISTORY_DSN_FILE")
		}
		checkArgs = []string{"check", "--offline"}
	case len(args) > 0 && args[0] == "serve":
		// serve reads only its report folder, which must be mounted.
		dir := flagValue(args, "report-dir")
		if _, err := os.Stat(filepath.Join(root, path.Clean(dir))); err != nil {
			t.Errorf("serve --report-dir %s: not a mounted folder: %v", dir, err)
		}
		return
	default:
		t.Fatalf("the container runs %q, which the test does not know", args)
	}
	cmd := exec.Command(bin, checkArgs...)
	cmd.Env = []string{}
	for k, val := range env {
		cmd.Env = append(cmd.Env, k+"="+val)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("clickrecon %s: %v\n%s%s", strings.Join(checkArgs, " "), err, stdout.String(), stderr.String())
	}
}

// buildClickrecon builds the binary the image holds, once per test.
func buildClickrecon(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "clickrecon")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command builds the binary under test: %v", err)
	}
	cmd := exec.Command(goTool, "build", "-o", bin, "../cmd/clickrecon")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestCheckJobAsDocumented runs the documented way of running clickrecon
// check in the cluster as far as it goes without one: the Job that
// kubectl create job --from would make of the documented overlay's
// CronJob (its jobTemplate's spec), changed by the documented kubectl
// patch --local, must run check in the nightly's container, and that
// container must validate (check --offline).
func TestCheckJobAsDocumented(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is not installed, and CI is set")
		}
		t.Skip("kubectl is not installed")
	}
	ops, err := os.ReadFile(operationsFile)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(ops), "<!-- check-job")
	m := regexp.MustCompile(`-p '([^']*)'`).FindStringSubmatch(block)
	if !ok || m == nil || !strings.Contains(block[:strings.Index(block, m[0])], "kubectl patch --local -f - --type=json -o yaml") {
		t.Fatalf("%s shows no kubectl patch --local of the check Job after <!-- check-job", operationsFile)
	}
	out := buildOverlay(t, kubectl, filepath.Dir(overlayFile))
	var cronJob *batchv1.CronJob
	var configMap *corev1.ConfigMap
	for _, doc := range splitDocuments(out) {
		obj, err := decodeObject(doc)
		if err != nil {
			t.Fatal(err)
		}
		switch o := obj.(type) {
		case *batchv1.CronJob:
			cronJob = o
		case *corev1.ConfigMap:
			configMap = o
		}
	}
	job := batchv1.Job{Spec: cronJob.Spec.JobTemplate.Spec}
	job.APIVersion, job.Kind, job.Name, job.Namespace = "batch/v1", "Job", "clickrecon-check", cronJob.Namespace
	raw, err := yaml.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kubectl, "patch", "--local", "-f", "-", "--type=json", "-o", "yaml", "-p", m[1])
	cmd.Stdin = bytes.NewReader(raw)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	patched, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl patch --local: %v\n%s", err, stderr.String())
	}
	obj, err := decodeObject(patched)
	if err != nil {
		t.Fatalf("the patched Job: %v\n%s", err, patched)
	}
	got := obj.(*batchv1.Job)
	c := got.Spec.Template.Spec.Containers[0]
	if c.Name != "clickrecon" || len(c.Args) != 1 || c.Args[0] != "check" {
		t.Fatalf("the patched Job's first container is %s with args %q, want clickrecon running check", c.Name, c.Args)
	}
	v := variant{name: "check", keys: []string{"elido-api-key", "store-dsn", "slack-webhook-url", "history-dsn"}}
	validateContainer(t, buildClickrecon(t), v, configMap, podOf{spec: got.Spec.Template.Spec}, c)
}
