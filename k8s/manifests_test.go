// Package k8s holds the Kubernetes manifests (a kustomize base) and the
// test that checks them: every document decodes strictly into the real
// Kubernetes types, so a misspelt field fails here rather than being
// dropped silently by the API server, and the settings the job relies on
// (exit-code handling, deadlines, security context, secrets as files) are
// asserted one by one.
package k8s

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// containerName is the job's container: the run whose args the tests read.
const containerName = "clickrecon"

// migrateContainerName is the init container that creates the history's
// tables before the run.
const migrateContainerName = "migrate"

// podStartAllowance is the time a pod is given to be scheduled, pull its
// image and start, in the activeDeadlineSeconds budget.
const podStartAllowance = 2 * time.Minute

// jobBackoff is the Job controller's first delay before a new pod after a
// failed one; it doubles with each failure.
const jobBackoff = 10 * time.Second

// kustomization is the part of kustomization.yaml the base uses. It is
// decoded strictly too: a field it does not know is a test failure, and
// is added here once it is understood.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
}

// base is every object of the folder, decoded.
type base struct {
	kustomization  kustomization
	cronJob        *batchv1.CronJob
	job            *batchv1.Job
	serviceAccount *corev1.ServiceAccount
	configMap      *corev1.ConfigMap
	secret         *corev1.Secret
	networkPolicy  *networkingv1.NetworkPolicy
}

// load reads kustomization.yaml and every resource it lists.
func load(t *testing.T) *base {
	t.Helper()
	b := &base{}
	raw, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(raw, &b.kustomization); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	for _, file := range b.kustomization.Resources {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("kustomization.yaml lists %s: %v", file, err)
		}
		docs := splitDocuments(raw)
		if len(docs) == 0 {
			t.Errorf("%s holds no document", file)
		}
		for i, doc := range docs {
			if err := b.add(doc); err != nil {
				t.Errorf("%s, document %d: %v", file, i+1, err)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	for name, missing := range map[string]bool{
		"CronJob": b.cronJob == nil, "Job": b.job == nil,
		"ServiceAccount": b.serviceAccount == nil, "ConfigMap": b.configMap == nil,
		"Secret": b.secret == nil, "NetworkPolicy": b.networkPolicy == nil,
	} {
		if missing {
			t.Errorf("the base has no %s", name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return b
}

// add decodes one document strictly into the type its kind names.
func (b *base) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	type target struct {
		apiVersion string
		obj        any
		seen       bool
	}
	var tg target
	switch tm.Kind {
	case "CronJob":
		tg = target{"batch/v1", &batchv1.CronJob{}, b.cronJob != nil}
	case "Job":
		tg = target{"batch/v1", &batchv1.Job{}, b.job != nil}
	case "ServiceAccount":
		tg = target{"v1", &corev1.ServiceAccount{}, b.serviceAccount != nil}
	case "ConfigMap":
		tg = target{"v1", &corev1.ConfigMap{}, b.configMap != nil}
	case "Secret":
		tg = target{"v1", &corev1.Secret{}, b.secret != nil}
	case "NetworkPolicy":
		tg = target{"networking.k8s.io/v1", &networkingv1.NetworkPolicy{}, b.networkPolicy != nil}
	default:
		return fmt.Errorf("kind %q: the test does not know it; add it to base.add", tm.Kind)
	}
	if tm.APIVersion != tg.apiVersion {
		return fmt.Errorf("%s has apiVersion %q, want %q", tm.Kind, tm.APIVersion, tg.apiVersion)
	}
	if tg.seen {
		return fmt.Errorf("a second %s: the test expects one", tm.Kind)
	}
	if err := decodeStrict(doc, tg.obj); err != nil {
		return fmt.Errorf("%s: %w", tm.Kind, err)
	}
	switch o := tg.obj.(type) {
	case *batchv1.CronJob:
		b.cronJob = o
	case *batchv1.Job:
		b.job = o
	case *corev1.ServiceAccount:
		b.serviceAccount = o
	case *corev1.ConfigMap:
		b.configMap = o
	case *corev1.Secret:
		b.secret = o
	case *networkingv1.NetworkPolicy:
		b.networkPolicy = o
	}
	return nil
}

// decodeStrict decodes a YAML document into obj, failing on an unknown
// field, a field spelt with the wrong case, a duplicate key or a value of
// the wrong type.
//
// yaml.UnmarshalStrict alone is not enough: it decodes with encoding/json,
// which matches field names case-insensitively, so "readonly: true" would
// pass for readOnly while the API server, whose decoder is case-sensitive,
// drops it. So the YAML becomes JSON strictly (duplicate keys fail), and
// the JSON is decoded by sigs.k8s.io/json, the API server's own decoder,
// with every strict check on.
func decodeStrict(doc []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(j, obj)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// splitDocuments splits a YAML stream into its documents, leaving out
// those that hold only comments.
func splitDocuments(raw []byte) [][]byte {
	var docs [][]byte
	for _, doc := range documentSeparator.Split(string(raw), -1) {
		for _, line := range strings.Split(doc, "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				docs = append(docs, []byte(doc))
				break
			}
		}
	}
	return docs
}

func TestKustomizationListsEveryFile(t *testing.T) {
	raw, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := decodeStrict(raw, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml is %s %s, want kustomize.config.k8s.io/v1beta1 Kustomization", k.APIVersion, k.Kind)
	}
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return f == "kustomization.yaml" })
	slices.Sort(files)
	listed := slices.Clone(k.Resources)
	slices.Sort(listed)
	if diff := cmp.Diff(files, listed); diff != "" {
		t.Errorf("kustomization.yaml resources differ from the YAML files of the folder (-files +listed):\n%s", diff)
	}
	if len(slices.Compact(listed)) != len(k.Resources) {
		t.Errorf("kustomization.yaml lists a file twice: %v", k.Resources)
	}
}

func TestStrictDecodingRejectsMistakes(t *testing.T) {
	const good = `apiVersion: batch/v1
kind: Job
metadata:
  name: x
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: clickrecon
          image: clickrecon
`
	if err := decodeStrict([]byte(good), &batchv1.Job{}); err != nil {
		t.Fatalf("the valid document does not decode: %v", err)
	}
	tests := []struct {
		name string
		old  string // replaced in good
		new  string
	}{
		{"misspelt_field", "backoffLimit: 2", "backofLimit: 2"},
		{"wrong_case", "restartPolicy: Never", "restartpolicy: Never"},
		{"field_of_another_kind", "backoffLimit: 2", "concurrencyPolicy: Forbid"},
		{"misspelt_nested_field", "restartPolicy: Never", "restartPolicy: Never\n      automountServiceAccountTokens: false"},
		{"wrong_type", "backoffLimit: 2", "backoffLimit: two"},
		{"duplicate_key", "backoffLimit: 2", "backoffLimit: 2\n  backoffLimit: 3"},
		{"misplaced_field", "          image: clickrecon", "          image: clickrecon\n          backoffLimit: 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(good, tt.old, tt.new, 1)
			if doc == good {
				t.Fatalf("the case changes nothing")
			}
			if err := decodeStrict([]byte(doc), &batchv1.Job{}); err == nil {
				t.Errorf("decoded without error:\n%s", doc)
			}
		})
	}
}

func TestManifestsDecodeStrictly(t *testing.T) {
	b := load(t) // fails on any document that does not decode strictly
	for _, name := range []string{b.cronJob.Name, b.job.Name, b.serviceAccount.Name, b.configMap.Name, b.secret.Name, b.networkPolicy.Name} {
		if name == "" {
			t.Error("an object has no metadata.name")
		}
	}
}

// timeout is RECON_TIMEOUT from the ConfigMap.
func (b *base) timeout(t *testing.T) time.Duration {
	t.Helper()
	v, ok := b.configMap.Data["RECON_TIMEOUT"]
	if !ok {
		t.Fatal("the ConfigMap does not set RECON_TIMEOUT: activeDeadlineSeconds must stay above it")
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("RECON_TIMEOUT %q: %v", v, err)
	}
	return d
}

func TestCronJob(t *testing.T) {
	b := load(t)
	s := b.cronJob.Spec
	tz := b.configMap.Data["RECON_TZ"]
	if s.TimeZone == nil || *s.TimeZone != tz {
		t.Errorf("timeZone %v, want RECON_TZ %q: the schedule is meant in the zone of the days", deref(s.TimeZone), tz)
	}
	if s.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("concurrencyPolicy %q, want Forbid", s.ConcurrencyPolicy)
	}
	if s.StartingDeadlineSeconds == nil || *s.StartingDeadlineSeconds <= 0 {
		t.Errorf("startingDeadlineSeconds %v, want a positive value", deref(s.StartingDeadlineSeconds))
	}
	if s.SuccessfulJobsHistoryLimit == nil || s.FailedJobsHistoryLimit == nil {
		t.Error("successfulJobsHistoryLimit and failedJobsHistoryLimit must both be set")
	} else if *s.FailedJobsHistoryLimit < 1 {
		t.Errorf("failedJobsHistoryLimit %d: keep at least one failed Job to read its logs", *s.FailedJobsHistoryLimit)
	}
	if s.Suspend != nil && *s.Suspend {
		t.Error("the CronJob is suspended")
	}

	// The schedule must fall after midnight + RECON_SETTLE, or yesterday
	// is still provisional and never alerted on the night it should be.
	fields := strings.Fields(s.Schedule)
	if len(fields) != 5 {
		t.Fatalf("schedule %q: want five fields", s.Schedule)
	}
	minute, err1 := strconv.Atoi(fields[0])
	hour, err2 := strconv.Atoi(fields[1])
	settle, err3 := time.ParseDuration(b.configMap.Data["RECON_SETTLE"])
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("schedule %q and RECON_SETTLE %q: want a fixed minute and hour and a duration", s.Schedule, b.configMap.Data["RECON_SETTLE"])
	}
	if at := time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute; at <= settle {
		t.Errorf("schedule %q runs %s after midnight, not after RECON_SETTLE %s", s.Schedule, at, settle)
	}
	if got := containerArgs(t, b.cronJob.Spec.JobTemplate.Spec.Template.Spec); !slices.Equal(got, []string{"run"}) {
		t.Errorf("CronJob args %q, want [run]: the nightly window comes from RECON_DAYS", got)
	}
}

func TestJobSpecs(t *testing.T) {
	b := load(t)
	timeout := b.timeout(t)
	for name, s := range map[string]batchv1.JobSpec{
		"CronJob " + b.cronJob.Name: b.cronJob.Spec.JobTemplate.Spec,
		"Job " + b.job.Name:         b.job.Spec,
	} {
		t.Run(name, func(t *testing.T) {
			if s.BackoffLimit == nil || *s.BackoffLimit > 3 || *s.BackoffLimit < 0 {
				t.Errorf("backoffLimit %v, want 0 to 3", deref(s.BackoffLimit))
			}
			if s.ActiveDeadlineSeconds == nil {
				t.Fatal("activeDeadlineSeconds is not set")
			}
			// activeDeadlineSeconds counts from the Job's start, retries
			// included: every pod backoffLimit allows must have time for
			// its migrate, a whole RECON_TIMEOUT and its grace period, and
			// to be scheduled, plus the controller's backoff between pods.
			deadline := time.Duration(*s.ActiveDeadlineSeconds) * time.Second
			pod := s.Template.Spec
			attempts := int(deref0(s.BackoffLimit)) + 1
			perPod := migrateTimeout(t, pod) + timeout + time.Duration(deref0(pod.TerminationGracePeriodSeconds))*time.Second + podStartAllowance
			need := time.Duration(attempts) * perPod
			for i := range attempts - 1 {
				need += jobBackoff << i
			}
			if deadline < need {
				t.Errorf("activeDeadlineSeconds %s leaves the last of %d pods less than a full run: want at least %s (%d x %s + backoff)",
					deadline, attempts, need, attempts, perPod)
			}
			// Longer than a night, and concurrencyPolicy: Forbid skips the
			// next night's run while a retry is still going.
			if deadline >= 20*time.Hour {
				t.Errorf("activeDeadlineSeconds %s: a stuck Job would hold back the next night's run", deadline)
			}
			// No rule names a container, so that the policy holds for
			// the pod with or without its migrate init container.
			want := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					Operator: batchv1.PodFailurePolicyOnExitCodesOpIn,
					Values:   []int32{1, 2},
				},
			}, {
				Action: batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{
					Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				}},
			}}}
			if diff := cmp.Diff(want, s.PodFailurePolicy); diff != "" {
				t.Errorf("podFailurePolicy (-want +got):\n%s", diff)
			}
			checkFailurePolicyNamesContainers(t, s)
			if s.PodReplacementPolicy == nil || *s.PodReplacementPolicy != batchv1.Failed {
				t.Errorf("podReplacementPolicy %v, want Failed", deref(s.PodReplacementPolicy))
			}
			if pod.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("restartPolicy %q, want Never (podFailurePolicy requires it)", pod.RestartPolicy)
			}
			if len(pod.Containers) != 1 || pod.Containers[0].Name != containerName {
				t.Errorf("containers %v, want one named %s", names(pod.Containers), containerName)
			}
			if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds < 10 {
				t.Errorf("terminationGracePeriodSeconds %v: leave the run time to end cleanly on SIGTERM", deref(pod.TerminationGracePeriodSeconds))
			}
		})
	}
}

func TestPodSecurity(t *testing.T) {
	b := load(t)
	for name, pod := range b.pods() {
		t.Run(name, func(t *testing.T) {
			psc := pod.SecurityContext
			if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
				t.Error("pod securityContext.runAsNonRoot is not true")
			}
			if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Error("pod securityContext.seccompProfile is not RuntimeDefault")
			}
			if psc != nil && psc.RunAsUser != nil && *psc.RunAsUser == 0 {
				t.Error("pod runs as user 0")
			}
			all := append(slices.Clone(pod.InitContainers), pod.Containers...)
			for _, c := range all {
				sc := c.SecurityContext
				if sc == nil {
					t.Errorf("container %s has no securityContext", c.Name)
					continue
				}
				check := func(field string, ok bool) {
					if !ok {
						t.Errorf("container %s: %s", c.Name, field)
					}
				}
				check("runAsNonRoot must be true", sc.RunAsNonRoot != nil && *sc.RunAsNonRoot)
				check("readOnlyRootFilesystem must be true", sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem)
				check("allowPrivilegeEscalation must be false", sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation)
				check("privileged must not be true", sc.Privileged == nil || !*sc.Privileged)
				check("capabilities.drop must be [ALL]", sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}))
				check("capabilities.add must be empty", sc.Capabilities == nil || len(sc.Capabilities.Add) == 0)
				check("seccompProfile must be RuntimeDefault", sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault)

				for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					req, okReq := c.Resources.Requests[r]
					lim, okLim := c.Resources.Limits[r]
					if !okReq || !okLim || req.IsZero() || lim.IsZero() {
						t.Errorf("container %s: %s needs a request and a limit", c.Name, r)
						continue
					}
					if req.Cmp(lim) > 0 {
						t.Errorf("container %s: %s request %s above its limit %s", c.Name, r, req.String(), lim.String())
					}
				}
			}
		})
	}
}

func TestServiceAccount(t *testing.T) {
	b := load(t)
	sa := b.serviceAccount
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Error("the ServiceAccount must set automountServiceAccountToken: false")
	}
	for name, pod := range b.pods() {
		if pod.ServiceAccountName != sa.Name {
			t.Errorf("%s: serviceAccountName %q, want %q", name, pod.ServiceAccountName, sa.Name)
		}
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must be false", name)
		}
	}
}

func TestConfigMapAndImage(t *testing.T) {
	b := load(t)
	cm := b.configMap
	for _, name := range []string{"ELIDO_WORKSPACE_ID", "RECON_TZ", "RECON_DAYS", "RECON_TIMEOUT", "RECON_REPORT_DIR", "LOG_FORMAT"} {
		if cm.Data[name] == "" {
			t.Errorf("the ConfigMap does not set %s", name)
		}
	}
	if got := cm.Data["LOG_FORMAT"]; got != "json" {
		t.Errorf("LOG_FORMAT %q, want json in a cluster", got)
	}
	if _, err := time.LoadLocation(cm.Data["RECON_TZ"]); err != nil {
		t.Errorf("RECON_TZ: %v", err)
	}
	// Secrets never go in the ConfigMap: only their _FILE paths.
	for key := range cm.Data {
		if isSecretVariable(key) {
			t.Errorf("the ConfigMap sets the secret %s: mount it from the Secret and set %s_FILE", key, key)
		}
	}
	if len(cm.BinaryData) > 0 {
		t.Error("the ConfigMap has binaryData")
	}

	images := map[string]bool{}
	for _, img := range b.kustomization.Images {
		images[img.Name] = true
	}
	for name, pod := range b.pods() {
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil || c.EnvFrom[0].ConfigMapRef.Name != cm.Name {
				t.Errorf("%s, container %s: envFrom must be the ConfigMap %s alone", name, c.Name, cm.Name)
			}
			for _, e := range c.Env {
				if isSecretVariable(e.Name) {
					t.Errorf("%s, container %s: the environment sets the secret %s: use %s_FILE", name, c.Name, e.Name, e.Name)
				}
			}
			if !images[c.Image] {
				t.Errorf("%s, container %s: image %q is not one kustomization.yaml's images rewrites", name, c.Name, c.Image)
			}
		}
	}
}

// secretVariables are the variables that hold secrets (docs/contract.md); each
// is read from NAME_FILE in the cluster.
var secretVariables = []string{"ELIDO_API_KEY", "STORE_DSN", "HISTORY_DSN", "SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "HEALTHCHECK_URL"}

func isSecretVariable(name string) bool { return slices.Contains(secretVariables, name) }

func TestSecretIsAnExample(t *testing.T) {
	b := load(t)
	s := b.secret
	if len(s.Data) > 0 {
		t.Error("the example Secret has data: use stringData with placeholders")
	}
	if len(s.StringData) == 0 {
		t.Fatal("the example Secret has no stringData")
	}
	for k, v := range s.StringData {
		if !strings.Contains(v, "REPLACE_ME") {
			t.Errorf("Secret key %s is not a placeholder (it must contain REPLACE_ME): never commit a real secret", k)
		}
	}
	for _, k := range []string{"elido-api-key", "store-dsn"} {
		if _, ok := s.StringData[k]; !ok {
			t.Errorf("the example Secret has no %s", k)
		}
	}
}

// TestSecretFilesAreMounted follows every *_FILE variable to its file: it
// must lie in a volume of the Secret, mounted read-only, and name a key the
// Secret has. And every key of the Secret is read by some variable.
func TestSecretFilesAreMounted(t *testing.T) {
	b := load(t)
	for name, pod := range b.pods() {
		t.Run(name, func(t *testing.T) {
			c := pod.Containers[0]
			env := maps.Clone(b.configMap.Data)
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					env[e.Name] = e.Value
				}
			}
			volumes := map[string]corev1.Volume{}
			for _, v := range pod.Volumes {
				volumes[v.Name] = v
			}
			used := map[string]bool{}
			for _, secret := range secretVariables {
				file, ok := env[secret+"_FILE"]
				if !ok {
					continue
				}
				key, mount := secretKeyAt(t, file, c.VolumeMounts, volumes, b.secret.Name)
				if key == "" {
					t.Errorf("%s_FILE=%s is not in a volume of the Secret %s", secret, file, b.secret.Name)
					continue
				}
				if !mount.ReadOnly {
					t.Errorf("the Secret's mount %s is not readOnly", mount.MountPath)
				}
				if _, ok := b.secret.StringData[key]; !ok {
					t.Errorf("%s_FILE=%s reads key %q, which the Secret does not have", secret, file, key)
				}
				used[key] = true
			}
			for _, required := range []string{"ELIDO_API_KEY_FILE", "STORE_DSN_FILE"} {
				if env[required] == "" {
					t.Errorf("%s is not set", required)
				}
			}
			for k := range b.secret.StringData {
				if !used[k] {
					t.Errorf("Secret key %s is read by no *_FILE variable", k)
				}
			}
		})
	}
}

// secretKeyAt returns the key of secretName that the file path is, and the
// mount it is under, or "" when it is not a file of that Secret.
func secretKeyAt(t *testing.T, file string, mounts []corev1.VolumeMount, volumes map[string]corev1.Volume, secretName string) (string, corev1.VolumeMount) {
	for _, m := range mounts {
		rel, ok := strings.CutPrefix(path.Clean(file), path.Clean(m.MountPath)+"/")
		if !ok {
			continue
		}
		v := volumes[m.Name]
		if v.Secret == nil || v.Secret.SecretName != secretName {
			continue
		}
		if m.SubPath != "" {
			t.Errorf("mount %s uses subPath: a subPath mount never sees a rotated secret", m.MountPath)
		}
		if v.Secret.DefaultMode == nil || *v.Secret.DefaultMode&0o007 != 0 {
			t.Errorf("Secret volume %s: defaultMode %v, want no access for others (0440)", v.Name, deref(v.Secret.DefaultMode))
		}
		if len(v.Secret.Items) == 0 {
			return rel, m
		}
		for _, it := range v.Secret.Items {
			if it.Path == rel {
				return it.Key, m
			}
		}
	}
	return "", corev1.VolumeMount{}
}

func TestWritableDirectories(t *testing.T) { checkWritableDirectories(t, load(t)) }

// checkWritableDirectories checks that RECON_REPORT_DIR, when a folder,
// and /tmp are writable volumes in both pods.
func checkWritableDirectories(t *testing.T, b *base) {
	t.Helper()
	reportDir := b.configMap.Data["RECON_REPORT_DIR"]
	for name, pod := range b.pods() {
		t.Run(name, func(t *testing.T) {
			volumes := map[string]corev1.Volume{}
			for _, v := range pod.Volumes {
				volumes[v.Name] = v
			}
			mounted := map[string]corev1.Volume{}
			for _, m := range pod.Containers[0].VolumeMounts {
				if m.ReadOnly {
					continue
				}
				v, ok := volumes[m.Name]
				if !ok {
					t.Errorf("mount %s names no volume %q", m.MountPath, m.Name)
				}
				mounted[path.Clean(m.MountPath)] = v
			}
			// The root filesystem is read-only: the reports and any
			// temporary file need a volume of their own.
			dirs := []string{reportDir, "/tmp"}
			if strings.Contains(reportDir, "://") {
				dirs = dirs[1:] // an object store
			}
			for _, dir := range dirs {
				v, ok := mounted[path.Clean(dir)]
				if !ok {
					t.Errorf("%s is not a writable mount", dir)
					continue
				}
				if v.EmptyDir == nil && v.PersistentVolumeClaim == nil {
					t.Errorf("%s is volume %s, want an emptyDir or a PersistentVolumeClaim", dir, v.Name)
				}
				if v.EmptyDir != nil && v.EmptyDir.SizeLimit == nil {
					t.Errorf("emptyDir %s has no sizeLimit", v.Name)
				}
			}
		})
	}
}

// TestBackfillIsTheNightlyPod checks that the backfill Job runs exactly
// the CronJob's pod, with only its args changed.
func TestBackfillIsTheNightlyPod(t *testing.T) { checkBackfillIsTheNightlyPod(t, load(t)) }

// checkBackfillIsTheNightlyPod checks that the backfill Job's pod is the
// CronJob's but for its args, and its spec the CronJob's Job spec but
// for suspend and its TTL.
func checkBackfillIsTheNightlyPod(t *testing.T, b *base) {
	t.Helper()
	checkBackfillPod(t, b)
	want := b.cronJob.Spec.JobTemplate.Spec.DeepCopy()
	got := b.job.Spec.DeepCopy()
	want.Template, got.Template = corev1.PodTemplateSpec{}, corev1.PodTemplateSpec{}
	got.Suspend, got.TTLSecondsAfterFinished = nil, nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the backfill Job spec differs from the CronJob's beyond suspend and its TTL (-cronjob +job):\n%s", diff)
	}
}

// checkBackfillPod checks that the backfill Job is suspended and runs the
// CronJob's pod with only its args changed, to a window of dates.
func checkBackfillPod(t *testing.T, b *base) {
	t.Helper()
	nightly := b.cronJob.Spec.JobTemplate.Spec.Template.DeepCopy()
	backfill := b.job.Spec.Template.DeepCopy()

	args := containerArgs(t, backfill.Spec)
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("backfill args %q, want run first", args)
	}
	from, to := flagValue(args, "--from"), flagValue(args, "--to")
	for flag, v := range map[string]string{"--from": from, "--to": to} {
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			t.Errorf("backfill %s %q, want a YYYY-MM-DD date", flag, v)
		}
	}
	if from > to {
		t.Errorf("backfill --from %s is after --to %s", from, to)
	}
	if b.job.Spec.Suspend == nil || !*b.job.Spec.Suspend {
		t.Error("the backfill Job must be created suspended: applying the base must not start a backfill")
	}

	for i := range nightly.Spec.Containers {
		nightly.Spec.Containers[i].Args = nil
	}
	for i := range backfill.Spec.Containers {
		backfill.Spec.Containers[i].Args = nil
	}
	quantities := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	if diff := cmp.Diff(nightly, backfill, quantities); diff != "" {
		t.Errorf("the backfill pod template differs from the CronJob's beyond args (-cronjob +job):\n%s", diff)
	}
}

func TestNetworkPolicy(t *testing.T) {
	b := load(t)
	np := b.networkPolicy.Spec
	labels := b.cronJob.Spec.JobTemplate.Spec.Template.Labels
	sel, err := metav1.LabelSelectorAsSelector(&np.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Empty() || !sel.Matches(k8slabels.Set(labels)) {
		t.Errorf("podSelector %s does not select the job's pods (labels %v)", sel, labels)
	}
	if !slices.Contains(np.PolicyTypes, networkingv1.PolicyTypeEgress) || !slices.Contains(np.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("policyTypes %v, want Ingress and Egress", np.PolicyTypes)
	}
	if len(np.Ingress) > 0 {
		t.Error("ingress rules allow connections to a batch job")
	}

	type port struct {
		protocol corev1.Protocol
		port     int
	}
	rules := map[port][]networkingv1.NetworkPolicyPeer{}
	for _, r := range np.Egress {
		if len(r.Ports) == 0 {
			t.Errorf("an egress rule allows every port: %+v", r)
		}
		for _, p := range r.Ports {
			proto := corev1.ProtocolTCP
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			if p.Port == nil || p.EndPort != nil {
				t.Errorf("an egress rule allows a port range: %+v", p)
				continue
			}
			k := port{proto, p.Port.IntValue()}
			rules[k] = append(rules[k], r.To...)
		}
	}
	var got []port
	for k := range rules {
		got = append(got, k)
	}
	want := []port{{"TCP", 53}, {"TCP", 443}, {"TCP", 5432}, {"UDP", 53}}
	slices.SortFunc(got, func(a, b port) int {
		if c := strings.Compare(string(a.protocol), string(b.protocol)); c != 0 {
			return c
		}
		return a.port - b.port
	})
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(port{})); diff != "" {
		t.Errorf("egress ports (-want +got):\n%s", diff)
	}

	for _, p := range []port{{"UDP", 53}, {"TCP", 53}} {
		peers := rules[p]
		if len(peers) != 1 || peers[0].NamespaceSelector == nil || peers[0].PodSelector == nil ||
			peers[0].PodSelector.MatchLabels["k8s-app"] != "kube-dns" {
			t.Errorf("DNS %v: want the kube-dns pods only, got %+v", p, peers)
		}
	}

	var v4 *networkingv1.IPBlock
	for _, peer := range rules[port{"TCP", 443}] {
		if peer.IPBlock == nil {
			t.Errorf("HTTPS egress to a peer other than an ipBlock: %+v", peer)
		} else if peer.IPBlock.CIDR == "0.0.0.0/0" {
			v4 = peer.IPBlock
		}
	}
	if v4 == nil {
		t.Fatal("no HTTPS egress to 0.0.0.0/0 (public addresses)")
	}
	for _, private := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"} {
		if !slices.Contains(v4.Except, private) {
			t.Errorf("HTTPS egress does not except %s", private)
		}
	}
}

// pods returns the pod spec of the CronJob and of the Job by name.
func (b *base) pods() map[string]corev1.PodSpec {
	return map[string]corev1.PodSpec{
		"CronJob " + b.cronJob.Name: b.cronJob.Spec.JobTemplate.Spec.Template.Spec,
		"Job " + b.job.Name:         b.job.Spec.Template.Spec,
	}
}

func containerArgs(t *testing.T, pod corev1.PodSpec) []string {
	t.Helper()
	for _, c := range pod.Containers {
		if c.Name == containerName {
			if len(c.Command) > 0 {
				t.Errorf("container %s sets command %q: the image's entrypoint is the binary", c.Name, c.Command)
			}
			return c.Args
		}
	}
	t.Fatalf("no container %s", containerName)
	return nil
}

// flagValue returns the value of --name v or --name=v in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func names(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// deref0 returns a pointer's value, or the zero value for nil.
func deref0[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// deref shows a pointer's value in a message, or <unset>.
func deref[T any](p *T) string {
	if p == nil {
		return "<unset>"
	}
	return fmt.Sprint(*p)
}

// migrateContainer returns the pod's migrate init container, or fails.
func migrateContainer(t *testing.T, pod corev1.PodSpec) corev1.Container {
	t.Helper()
	for _, c := range pod.InitContainers {
		if c.Name == migrateContainerName {
			return c
		}
	}
	t.Fatalf("no init container %s: the history's tables would never be created", migrateContainerName)
	return corev1.Container{}
}

// migrateTimeout is the RECON_TIMEOUT the migrate init container runs
// with: its own env value, else the ConfigMap's.
func migrateTimeout(t *testing.T, pod corev1.PodSpec) time.Duration {
	t.Helper()
	c := migrateContainer(t, pod)
	for _, e := range c.Env {
		if e.Name == "RECON_TIMEOUT" {
			d, err := time.ParseDuration(e.Value)
			if err != nil {
				t.Fatalf("init container %s: RECON_TIMEOUT %q: %v", c.Name, e.Value, err)
			}
			return d
		}
	}
	t.Fatalf("init container %s sets no RECON_TIMEOUT of its own: it would wait up to the run's", c.Name)
	return 0
}

// TestMigrateRunsFirst checks the order of operations the history needs:
// an init container runs "clickrecon migrate" from the same image, with the
// same settings and the same Secret, so that HISTORY_DSN_FILE names the
// same database, before the run starts.
func TestMigrateRunsFirst(t *testing.T) {
	b := load(t)
	if b.configMap.Data["HISTORY_DSN_FILE"] == "" {
		t.Fatal("the ConfigMap sets no HISTORY_DSN_FILE: the migrate init container would exit 2")
	}
	for name, pod := range b.pods() {
		t.Run(name, func(t *testing.T) {
			if len(pod.InitContainers) != 1 {
				t.Errorf("init containers %v, want only %s", names(pod.InitContainers), migrateContainerName)
			}
			m := migrateContainer(t, pod)
			run := pod.Containers[0]
			if m.Image != run.Image || m.ImagePullPolicy != run.ImagePullPolicy {
				t.Errorf("migrate runs image %q (%s), the run %q (%s): one binary must own the schema", m.Image, m.ImagePullPolicy, run.Image, run.ImagePullPolicy)
			}
			if len(m.Command) > 0 {
				t.Errorf("migrate sets command %q: the image's entrypoint is the binary", m.Command)
			}
			if !slices.Equal(m.Args, []string{"migrate"}) {
				t.Errorf("migrate args %q, want [migrate]", m.Args)
			}
			if m.RestartPolicy != nil {
				t.Errorf("migrate has restartPolicy %s: a sidecar would never finish before the run", *m.RestartPolicy)
			}
			if d := migrateTimeout(t, pod); d <= 0 || d > 10*time.Minute {
				t.Errorf("migrate RECON_TIMEOUT %s, want a few minutes", d)
			}
			volumes := map[string]corev1.Volume{}
			for _, v := range pod.Volumes {
				volumes[v.Name] = v
			}
			file := b.configMap.Data["HISTORY_DSN_FILE"]
			key, _ := secretKeyAt(t, file, m.VolumeMounts, volumes, b.secret.Name)
			runKey, _ := secretKeyAt(t, file, run.VolumeMounts, volumes, b.secret.Name)
			if key == "" || key != runKey {
				t.Errorf("HISTORY_DSN_FILE=%s is key %q of the Secret in migrate, %q in the run: want the same key", file, key, runKey)
			}
		})
	}
}

// TestGoMemLimit checks that every container sets GOMEMLIMIT as a value
// about 90% of its memory limit: a soft limit the GC keeps the heap under,
// with room left for what the Go runtime does not count.
func TestGoMemLimit(t *testing.T) {
	b := load(t)
	for name, pod := range b.pods() {
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			t.Run(name+"/"+c.Name, func(t *testing.T) { checkGoMemLimit(t, c) })
		}
	}
}

// checkGoMemLimit checks that the container c sets GOMEMLIMIT as a value
// about 90% of its memory limit.
func checkGoMemLimit(t *testing.T, c corev1.Container) {
	t.Helper()
	var value string
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			if e.ValueFrom != nil {
				t.Fatal("GOMEMLIMIT comes from valueFrom: the full limit leaves the GC no room; set a value")
			}
			value = e.Value
		}
	}
	if value == "" {
		t.Fatal("GOMEMLIMIT is not set")
	}
	soft, err := parseGoMemLimit(value)
	if err != nil {
		t.Fatalf("GOMEMLIMIT %q: %v", value, err)
	}
	lim, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		t.Fatal("no memory limit")
	}
	ratio := float64(soft) / float64(lim.Value())
	if ratio < 0.85 || ratio > 0.95 {
		t.Errorf("GOMEMLIMIT %s is %.0f%% of the memory limit %s, want about 90%%", value, ratio*100, lim.String())
	}
}

// parseGoMemLimit reads GOMEMLIMIT as the Go runtime does: a number of
// bytes with an optional unit B, KiB, MiB, GiB or TiB.
func parseGoMemLimit(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive number of bytes with B, KiB, MiB, GiB or TiB (Mi is not Go's unit)")
	}
	return n * mult, nil
}

// checkFailurePolicyNamesContainers checks that every containerName of
// the podFailurePolicy is a container or init container of the pod: the
// API server refuses the Job otherwise.
func checkFailurePolicyNamesContainers(t *testing.T, s batchv1.JobSpec) {
	t.Helper()
	if s.PodFailurePolicy == nil {
		return
	}
	pod := s.Template.Spec
	all := names(append(slices.Clone(pod.InitContainers), pod.Containers...))
	for _, r := range s.PodFailurePolicy.Rules {
		if r.OnExitCodes != nil && r.OnExitCodes.ContainerName != nil && !slices.Contains(all, *r.OnExitCodes.ContainerName) {
			t.Errorf("podFailurePolicy names container %s, which the pod does not have (%v)", *r.OnExitCodes.ContainerName, all)
		}
	}
}
