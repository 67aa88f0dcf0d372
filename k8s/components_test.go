package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/clickrecon/clickrecon/report/storage"
)

// component is the part of a kustomize Component the components of
// components/ use, decoded strictly like kustomization.yaml.
type component struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources,omitempty"`
	Patches    []struct {
		Path string `json:"path"`
	} `json:"patches,omitempty"`
	// Replacements are left to kustomize: TestComponentsBuildWithKubectl
	// checks what they do.
	Replacements []json.RawMessage `json:"replacements,omitempty"`
}

// components lists the folders of components/.
func components(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("components/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no component in components/")
	}
	return dirs
}

// decodeObject decodes one document strictly into the type its kind
// names, among the kinds the base and its components use.
func decodeObject(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	var apiVersion string
	switch tm.Kind {
	case "CronJob":
		apiVersion, obj = "batch/v1", &batchv1.CronJob{}
	case "Job":
		apiVersion, obj = "batch/v1", &batchv1.Job{}
	case "ServiceAccount":
		apiVersion, obj = "v1", &corev1.ServiceAccount{}
	case "ConfigMap":
		apiVersion, obj = "v1", &corev1.ConfigMap{}
	case "Secret":
		apiVersion, obj = "v1", &corev1.Secret{}
	case "Pod":
		apiVersion, obj = "v1", &corev1.Pod{}
	case "PersistentVolumeClaim":
		apiVersion, obj = "v1", &corev1.PersistentVolumeClaim{}
	case "NetworkPolicy":
		apiVersion, obj = "networking.k8s.io/v1", &networkingv1.NetworkPolicy{}
	default:
		return nil, fmt.Errorf("kind %q: the test does not know it; add it to decodeObject", tm.Kind)
	}
	if tm.APIVersion != apiVersion {
		return nil, fmt.Errorf("%s has apiVersion %q, want %q", tm.Kind, tm.APIVersion, apiVersion)
	}
	if err := decodeStrict(doc, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	return obj, nil
}

// withComponent returns the base with the component in dir applied as
// kustomize applies it: every resource it lists decoded strictly and
// returned, and each strategic-merge patch decoded strictly, matched to
// the base object of its kind and name (a patch that names none fails)
// and merged into it with the API server's own strategic merge, after
// which the result is decoded strictly again.
func withComponent(t *testing.T, dir string) (*base, []any) {
	t.Helper()
	return withComponents(t, dir)
}

// withComponents is withComponent for several components, applied in the
// order given, as an overlay's components list applies them.
func withComponents(t *testing.T, dirs ...string) (*base, []any) {
	t.Helper()
	b := load(t)
	var extra []any
	for _, dir := range dirs {
		extra = append(extra, b.applyComponent(t, dir)...)
	}
	return b, extra
}

// applyComponent applies the component in dir to b and returns the
// objects it adds.
func (b *base) applyComponent(t *testing.T, dir string) []any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c component
	if err := decodeStrict(raw, &c); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	if c.APIVersion != "kustomize.config.k8s.io/v1alpha1" || c.Kind != "Component" {
		t.Errorf("%s is %s %s, want kustomize.config.k8s.io/v1alpha1 Component", dir, c.APIVersion, c.Kind)
	}
	var extra []any
	for _, file := range c.Resources {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("%s lists %s: %v", dir, file, err)
		}
		for i, doc := range splitDocuments(raw) {
			obj, err := decodeObject(doc)
			if err != nil {
				t.Errorf("%s/%s, document %d: %v", dir, file, i+1, err)
				continue
			}
			extra = append(extra, obj)
		}
	}
	for _, p := range c.Patches {
		if p.Path == "" {
			t.Errorf("%s: a patch without path: keep patches in files, so this test reads them", dir)
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, p.Path))
		if err != nil {
			t.Fatalf("%s lists patch %s: %v", dir, p.Path, err)
		}
		if err := b.patch(raw); err != nil {
			t.Errorf("%s/%s: %v", dir, p.Path, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return extra
}

// patch merges one strategic-merge patch into the base object it names.
func (b *base) patch(doc []byte) error {
	typed, err := decodeObject(doc) // a misspelt field fails here
	if err != nil {
		return err
	}
	var meta struct {
		Kind     string            `json:"kind"`
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	targets := map[string]any{
		"CronJob/" + b.cronJob.Name:               &b.cronJob,
		"Job/" + b.job.Name:                       &b.job,
		"ConfigMap/" + b.configMap.Name:           &b.configMap,
		"Secret/" + b.secret.Name:                 &b.secret,
		"ServiceAccount/" + b.serviceAccount.Name: &b.serviceAccount,
		"NetworkPolicy/" + b.networkPolicy.Name:   &b.networkPolicy,
	}
	key := meta.Kind + "/" + meta.Metadata.Name
	target, ok := targets[key]
	if !ok {
		return fmt.Errorf("the patch targets %s, which the base does not have", key)
	}
	patchJSON, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	// target is a pointer to the base's field, which points to the object.
	objPtr := func() any {
		switch p := target.(type) {
		case **batchv1.CronJob:
			return *p
		case **batchv1.Job:
			return *p
		case **corev1.ConfigMap:
			return *p
		case **corev1.Secret:
			return *p
		case **corev1.ServiceAccount:
			return *p
		case **networkingv1.NetworkPolicy:
			return *p
		}
		return nil
	}()
	original, err := json.Marshal(objPtr)
	if err != nil {
		return err
	}
	merged, err := strategicpatch.StrategicMergePatch(original, patchJSON, typed)
	if err != nil {
		return fmt.Errorf("merge into %s: %w", key, err)
	}
	out, err := decodeObject(mustYAML(merged))
	if err != nil {
		return fmt.Errorf("%s after the patch: %w", key, err)
	}
	switch p := target.(type) {
	case **batchv1.CronJob:
		*p = out.(*batchv1.CronJob)
	case **batchv1.Job:
		*p = out.(*batchv1.Job)
	case **corev1.ConfigMap:
		*p = out.(*corev1.ConfigMap)
	case **corev1.Secret:
		*p = out.(*corev1.Secret)
	case **corev1.ServiceAccount:
		*p = out.(*corev1.ServiceAccount)
	case **networkingv1.NetworkPolicy:
		*p = out.(*networkingv1.NetworkPolicy)
	}
	return nil
}

func mustYAML(j []byte) []byte {
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		panic(err)
	}
	return y
}

// Every file of a component is listed in its kustomization.yaml, and
// every component applies to the base.
func TestComponentsApply(t *testing.T) {
	for _, dir := range components(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			withComponent(t, dir) // fails on any document or patch that does not apply
			raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var c component
			if err := decodeStrict(raw, &c); err != nil {
				t.Fatal(err)
			}
			listed := slices.Clone(c.Resources)
			for _, p := range c.Patches {
				listed = append(listed, p.Path)
			}
			slices.Sort(listed)
			files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range files {
				if filepath.Base(f) != "kustomization.yaml" {
					names = append(names, filepath.Base(f))
				}
			}
			if diff := cmp.Diff(names, listed); diff != "" {
				t.Errorf("the component's files differ from those its kustomization.yaml lists (-files +listed):\n%s", diff)
			}
		})
	}
}

func TestReportsPVCComponent(t *testing.T) {
	b, extra := withComponent(t, "components/reports-pvc")
	var pvc *corev1.PersistentVolumeClaim
	for _, o := range extra {
		if p, ok := o.(*corev1.PersistentVolumeClaim); ok {
			pvc = p
		}
	}
	if pvc == nil {
		t.Fatal("the component adds no PersistentVolumeClaim")
	}
	if _, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		t.Error("the claim requests no storage")
	}
	if dir := b.configMap.Data["RECON_REPORT_DIR"]; strings.Contains(dir, "://") {
		t.Errorf("RECON_REPORT_DIR %q: the claim needs a folder", dir)
	}
	for name, pod := range b.pods() {
		var reports *corev1.Volume
		for i, v := range pod.Volumes {
			if v.Name == "reports" {
				reports = &pod.Volumes[i]
			}
		}
		if reports == nil || reports.PersistentVolumeClaim == nil || reports.PersistentVolumeClaim.ClaimName != pvc.Name {
			t.Errorf("%s: the reports volume is %+v, want the claim %s", name, reports, pvc.Name)
		} else if reports.EmptyDir != nil {
			t.Errorf("%s: the reports volume is both an emptyDir and a claim", name)
		}
	}
	checkWritableDirectories(t, b)
	checkBackfillIsTheNightlyPod(t, b)
}

// The viewer serves the claim the runs write to, read-only, on the pod's
// loopback only (kubectl port-forward), as hardened as the nightly pod,
// stops by itself, and is let nothing in or out.
func TestReportsViewerComponent(t *testing.T) {
	b, extra := withComponents(t, "components/reports-pvc", "components/reports-viewer")
	var pod *corev1.Pod
	var pvc *corev1.PersistentVolumeClaim
	var policy *networkingv1.NetworkPolicy
	for _, o := range extra {
		switch o := o.(type) {
		case *corev1.Pod:
			pod = o
		case *corev1.PersistentVolumeClaim:
			pvc = o
		case *networkingv1.NetworkPolicy:
			policy = o
		}
	}
	if pod == nil || pvc == nil || policy == nil {
		t.Fatalf("pod %v, claim %v, policy %v: want all three", pod != nil, pvc != nil, policy != nil)
	}
	spec := pod.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	nightly := b.cronJob.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	if c.Image != nightly.Image {
		t.Errorf("image %q, want the nightly's %q", c.Image, nightly.Image)
	}
	t.Run("GOMEMLIMIT", func(t *testing.T) { checkGoMemLimit(t, c) })
	reportDir := b.configMap.Data["RECON_REPORT_DIR"]
	if want := []string{"serve", "--addr", "127.0.0.1:8080", "--report-dir", reportDir}; !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q: the folder the runs write, on the loopback only", c.Args, want)
	}
	var claim *corev1.Volume
	for i, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = &spec.Volumes[i]
		}
	}
	if claim == nil || claim.PersistentVolumeClaim.ClaimName != pvc.Name || !claim.PersistentVolumeClaim.ReadOnly {
		t.Fatalf("volumes %+v: want the claim %s, read-only", spec.Volumes, pvc.Name)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.Name == claim.Name {
			mounted = m.MountPath == reportDir && m.ReadOnly
		}
	}
	if !mounted || len(c.VolumeMounts) != 1 {
		t.Errorf("mounts %+v: want the claim alone, read-only at %s", c.VolumeMounts, reportDir)
	}
	sc, psc := c.SecurityContext, spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("security contexts %+v, %+v: want non-root, a read-only root, no escalation, no capability", psc, sc)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the viewer mounts a service account token: it talks to no API")
	}
	if spec.ActiveDeadlineSeconds == nil || spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("the viewer does not stop by itself: a ReadWriteOnce claim would stay on its node")
	}
	sel, err := metav1.LabelSelectorAsSelector(&policy.Spec.PodSelector)
	if err != nil || !sel.Matches(k8slabels.Set(pod.Labels)) {
		t.Errorf("the viewer's NetworkPolicy does not select its pod (%v)", err)
	}
	if len(policy.Spec.Ingress) > 0 || len(policy.Spec.Egress) > 0 || len(policy.Spec.PolicyTypes) != 2 {
		t.Errorf("the viewer's NetworkPolicy %+v: want nothing in and nothing out", policy.Spec)
	}
	nightlySel, err := metav1.LabelSelectorAsSelector(&b.networkPolicy.Spec.PodSelector)
	if err == nil && nightlySel.Matches(k8slabels.Set(pod.Labels)) {
		t.Error("the nightly's NetworkPolicy selects the viewer: it would let it reach the internet")
	}
}

func TestReportsS3Component(t *testing.T) {
	b, _ := withComponent(t, "components/reports-s3")
	base := load(t)
	dir := b.configMap.Data["RECON_REPORT_DIR"]
	u, err := url.Parse(dir)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		t.Fatalf("RECON_REPORT_DIR %q, want s3://BUCKET/PREFIX", dir)
	}
	if u.User != nil {
		t.Error("RECON_REPORT_DIR carries credentials: they come from the pod's identity or the Secret")
	}
	if u.Query().Get("region") == "" {
		t.Error("RECON_REPORT_DIR sets no region")
	}
	for _, p := range []string{"prefix", "key"} {
		if u.Query().Has(p) {
			t.Errorf("RECON_REPORT_DIR sets %s: the prefix is the URL's path", p)
		}
	}
	// The job opens it the same way: every query parameter is one
	// clickrecon's S3 client knows.
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	d, err := storage.Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("RECON_REPORT_DIR %q does not open: %v", dir, err)
	}
	d.Close()
	// A merge patch: every other setting of the base is kept.
	for k, v := range base.configMap.Data {
		if k != "RECON_REPORT_DIR" && b.configMap.Data[k] != v {
			t.Errorf("the component changed %s from %q to %q", k, v, b.configMap.Data[k])
		}
	}
	checkWritableDirectories(t, b)
}

func TestEgressPrivateComponent(t *testing.T) {
	b, extra := withComponent(t, "components/egress-private")
	var policies []*networkingv1.NetworkPolicy
	for _, o := range extra {
		if p, ok := o.(*networkingv1.NetworkPolicy); ok {
			policies = append(policies, p)
		}
	}
	if len(policies) != 1 {
		t.Fatalf("the component adds %d NetworkPolicies, want 1", len(policies))
	}
	np := policies[0]
	if np.Name == b.networkPolicy.Name {
		t.Errorf("the component's policy is named %s like the base's: it would replace it, not add to it", np.Name)
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	for name, pod := range map[string]map[string]string{
		"CronJob": b.cronJob.Spec.JobTemplate.Spec.Template.Labels,
		"Job":     b.job.Spec.Template.Labels,
	} {
		if sel.Empty() || !sel.Matches(k8slabels.Set(pod)) {
			t.Errorf("podSelector %s does not select the %s's pods (labels %v)", sel, name, pod)
		}
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}) {
		t.Errorf("policyTypes %v, want [Egress] alone", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) > 0 {
		t.Error("the component allows ingress")
	}
	for _, r := range np.Spec.Egress {
		if len(r.Ports) == 0 || len(r.To) == 0 {
			t.Errorf("an egress rule allows every port or every address: %+v", r)
		}
		for _, peer := range r.To {
			if peer.IPBlock != nil && (peer.IPBlock.CIDR == "0.0.0.0/0" || peer.IPBlock.CIDR == "::/0") {
				t.Errorf("an egress rule allows every address: %+v", peer)
			}
		}
	}
}

func TestNoHistoryComponent(t *testing.T) {
	b, _ := withComponent(t, "components/no-history")
	base := load(t)
	if v, ok := b.configMap.Data["HISTORY_DSN_FILE"]; ok {
		t.Errorf("HISTORY_DSN_FILE is still set (%q)", v)
	}
	for name, s := range map[string][2]batchv1.JobSpec{
		"CronJob": {base.cronJob.Spec.JobTemplate.Spec, b.cronJob.Spec.JobTemplate.Spec},
		"Job":     {base.job.Spec, b.job.Spec},
	} {
		t.Run(name, func(t *testing.T) {
			if ic := s[1].Template.Spec.InitContainers; len(ic) > 0 {
				t.Errorf("init containers %v: migrate would exit 2 without HISTORY_DSN", names(ic))
			}
			checkFailurePolicyNamesContainers(t, s[1])
			// The run's own rules are kept as they are.
			if diff := cmp.Diff(s[0].PodFailurePolicy, s[1].PodFailurePolicy); diff != "" {
				t.Errorf("podFailurePolicy changed (-base +component):\n%s", diff)
			}
		})
	}
	checkBackfillIsTheNightlyPod(t, b)
}

// TestBackfillShardedComponent checks the sliced backfill: an Indexed Job
// whose slices match --shard, each with its own retries and a full budget
// of time, where a slice that finds gaps (exit 1) fails its own index and
// not the Job, and a usage error (exit 2) still fails the Job at once. It
// holds with and without run history, in either order of components.
func TestBackfillShardedComponent(t *testing.T) {
	for name, dirs := range map[string][]string{
		"alone":                 {"components/backfill-sharded"},
		"after_no_history":      {"components/no-history", "components/backfill-sharded"},
		"before_no_history":     {"components/backfill-sharded", "components/no-history"},
		"with_reports_on_claim": {"components/reports-pvc", "components/backfill-sharded"},
	} {
		t.Run(name, func(t *testing.T) {
			b, _ := withComponents(t, dirs...)
			checkShardedBackfill(t, b)
		})
	}
}

func checkShardedBackfill(t *testing.T, b *base) {
	t.Helper()
	s := b.job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", deref(s.CompletionMode))
	}
	if s.Parallelism == nil || *s.Parallelism != 1 {
		t.Errorf("parallelism %v, want 1: slices side by side share one rate limit and one run lock", deref(s.Parallelism))
	}
	args := containerArgs(t, s.Template.Spec)
	index, n, ok := strings.Cut(flagValue(args, "--shard"), "/")
	if !ok || index != "$(JOB_COMPLETION_INDEX)" {
		t.Fatalf("--shard %q, want $(JOB_COMPLETION_INDEX)/N", flagValue(args, "--shard"))
	}
	if s.Completions == nil || fmt.Sprint(*s.Completions) != n {
		t.Errorf("completions %v, but --shard slices the window in %s", deref(s.Completions), n)
	}
	// Retries count per slice: the Job-wide backoffLimit is left to its
	// default, which backoffLimitPerIndex makes unlimited.
	if s.BackoffLimit != nil {
		t.Errorf("backoffLimit %d: one slice's retries would use up the others'", *s.BackoffLimit)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 0 || *s.BackoffLimitPerIndex > 3 {
		t.Fatalf("backoffLimitPerIndex %v, want 0 to 3", deref(s.BackoffLimitPerIndex))
	}
	if s.PodReplacementPolicy == nil || *s.PodReplacementPolicy != batchv1.Failed {
		t.Errorf("podReplacementPolicy %v, want Failed (podFailurePolicy requires it)", deref(s.PodReplacementPolicy))
	}
	checkFailurePolicyNamesContainers(t, s)

	// What happens to a slice's pod for each way it can end.
	action := func(code int32) batchv1.PodFailurePolicyAction {
		for _, r := range s.PodFailurePolicy.Rules {
			if r.OnExitCodes != nil && r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(r.OnExitCodes.Values, code) {
				return r.Action
			}
		}
		return "" // counted against backoffLimitPerIndex: retried
	}
	for code, want := range map[int32]batchv1.PodFailurePolicyAction{
		1: batchv1.PodFailurePolicyActionFailIndex, // gaps: this slice is done, the others go on
		2: batchv1.PodFailurePolicyActionFailJob,   // usage: every slice would meet it
		3: "",                                      // could not complete: retried
	} {
		if got := action(code); got != want {
			t.Errorf("exit %d: podFailurePolicy action %q, want %q", code, got, want)
		}
	}
	var disruption bool
	for _, r := range s.PodFailurePolicy.Rules {
		if len(r.OnPodConditions) == 1 && r.OnPodConditions[0].Type == corev1.DisruptionTarget {
			disruption = r.Action == batchv1.PodFailurePolicyActionIgnore
		}
	}
	if !disruption {
		t.Error("a disrupted pod is not ignored: a drain would count as a failure")
	}

	// Slices run one after the other, each with the single Job's budget.
	pod := s.Template.Spec
	attempts := int(*s.BackoffLimitPerIndex) + 1
	perPod := b.timeout(t) + time.Duration(deref0(pod.TerminationGracePeriodSeconds))*time.Second + podStartAllowance
	if len(pod.InitContainers) > 0 {
		perPod += migrateTimeout(t, pod)
	}
	perSlice := time.Duration(attempts) * perPod
	for i := range attempts - 1 {
		perSlice += jobBackoff << i
	}
	slicesN, _ := strconv.Atoi(n)
	if need := time.Duration(slicesN) * perSlice; s.ActiveDeadlineSeconds == nil || time.Duration(*s.ActiveDeadlineSeconds)*time.Second < need {
		t.Errorf("activeDeadlineSeconds %v leaves the last of %d slices less than a full run: want at least %s", deref(s.ActiveDeadlineSeconds), slicesN, need)
	}
	checkBackfillPod(t, b)
}

// TestComponentsBuildWithKubectl builds an overlay of the base with every
// component through kustomize itself (kubectl kustomize), when kubectl is
// installed, and decodes its output strictly.
func TestComponentsBuildWithKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed: the components were checked by TestComponentsApply alone")
	}
	overlay := t.TempDir()
	rel := func(p string) string {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := filepath.Rel(overlay, abs)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(r)
	}
	k := "resources:\n  - " + rel(".") + "\ncomponents:\n"
	for _, dir := range components(t) {
		k += "  - " + rel(dir) + "\n"
	}
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", overlay)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, stderr.String())
	}
	kinds := map[string]int{}
	var cronJob *batchv1.CronJob
	var job *batchv1.Job
	var viewer *corev1.Pod
	for i, doc := range splitDocuments(out) {
		obj, err := decodeObject(doc)
		if err != nil {
			t.Errorf("document %d of the build: %v", i+1, err)
			continue
		}
		kinds[fmt.Sprintf("%T", obj)]++
		switch o := obj.(type) {
		case *batchv1.CronJob:
			cronJob = o
		case *batchv1.Job:
			job = o
		case *corev1.Pod:
			viewer = o
		}
	}
	if cronJob != nil && viewer != nil {
		if got, want := viewer.Spec.Containers[0].Image, cronJob.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image; got != want {
			t.Errorf("the reports viewer runs the image %q, the nightly %q: want the same", got, want)
		}
	}
	want := map[string]int{
		"*v1.CronJob": 1, "*v1.Job": 1, "*v1.ServiceAccount": 1, "*v1.ConfigMap": 2, "*v1.Secret": 1,
		"*v1.PersistentVolumeClaim": 1, "*v1.NetworkPolicy": 3, "*v1.Pod": 1,
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("objects built (-want +got):\n%s", diff)
	}
	if job == nil || job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion || len(job.Spec.Template.Spec.InitContainers) > 0 {
		t.Errorf("the built backfill Job is not sliced, or still migrates without history: %+v", job)
	} else {
		checkFailurePolicyNamesContainers(t, job.Spec)
	}
	if cronJob != nil {
		for _, v := range cronJob.Spec.JobTemplate.Spec.Template.Spec.Volumes {
			if v.Name == "reports" && (v.PersistentVolumeClaim == nil || v.EmptyDir != nil) {
				t.Errorf("the built CronJob's reports volume is %+v, want the claim alone", v)
			}
		}
	}
}

// overlayFile is the overlay the documentation tells a user to copy.
const overlayFile = "../docs/overlay/kustomization.yaml"

// overlay is the part of an overlay's kustomization.yaml the documented
// one uses, decoded strictly.
type overlay struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
	Components []string `json:"components"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images"`
	Patches []struct {
		Patch  string `json:"patch"`
		Target *struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"target,omitempty"`
	} `json:"patches"`
	Replacements []struct {
		Source struct {
			Kind      string `json:"kind"`
			Name      string `json:"name"`
			FieldPath string `json:"fieldPath"`
		} `json:"source"`
		Targets []struct {
			Select struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"select"`
			FieldPaths []string `json:"fieldPaths"`
		} `json:"targets"`
	} `json:"replacements"`
}

// TestOverlay checks the documented overlay without kustomize: it uses
// this base and its components by the path a copy beside k8s/ would, and
// it copies RECON_TZ to the CronJob's timeZone, so the zone is set once.
func TestOverlay(t *testing.T) {
	raw, err := os.ReadFile(overlayFile)
	if err != nil {
		t.Fatal(err)
	}
	var o overlay
	if err := decodeStrict(raw, &o); err != nil {
		t.Fatalf("%s: %v", overlayFile, err)
	}
	here, _ := filepath.Abs(".")
	for _, r := range o.Resources {
		if got, _ := filepath.Abs(filepath.Join(filepath.Dir(overlayFile), r)); got != here {
			t.Errorf("the overlay's resource %s is not k8s/", r)
		}
	}
	for _, c := range o.Components {
		if _, err := os.Stat(filepath.Join(filepath.Dir(overlayFile), c, "kustomization.yaml")); err != nil {
			t.Errorf("the overlay's component %s: %v", c, err)
		}
	}
	b := load(t)
	images := map[string]bool{}
	for _, img := range b.kustomization.Images {
		images[img.NewName] = true
	}
	for _, img := range o.Images {
		if !images[img.Name] {
			t.Errorf("the overlay's image %s is not the name the base sets", img.Name)
		}
	}
	var deletesSecret, setsZone bool
	for _, p := range o.Patches {
		deletesSecret = deletesSecret || strings.Contains(p.Patch, "$patch: delete") && strings.Contains(p.Patch, "kind: Secret")
		setsZone = setsZone || strings.Contains(p.Patch, "kind: ConfigMap") && strings.Contains(p.Patch, "RECON_TZ:")
	}
	if !deletesSecret {
		t.Error("the overlay does not delete the base's example Secret: applying it would overwrite the real one")
	}
	if !setsZone {
		t.Error("the overlay does not set RECON_TZ in the ConfigMap")
	}
	var copiesZone bool
	for _, r := range o.Replacements {
		if r.Source.Kind != "ConfigMap" || r.Source.Name != b.configMap.Name || r.Source.FieldPath != "data.RECON_TZ" {
			continue
		}
		for _, tg := range r.Targets {
			if tg.Select.Kind == "CronJob" && tg.Select.Name == b.cronJob.Name && slices.Equal(tg.FieldPaths, []string{"spec.timeZone"}) {
				copiesZone = true
			}
		}
	}
	if !copiesZone {
		t.Error("the overlay does not copy the ConfigMap's RECON_TZ to the CronJob's spec.timeZone")
	}
}

// TestOverlayBuildsWithKubectl builds the documented overlay with
// kustomize itself, as it is and with another zone: the CronJob runs in
// the zone the ConfigMap counts days in, and the example Secret is gone.
func TestOverlayBuildsWithKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed: the overlay was checked by TestOverlay alone")
	}
	raw, err := os.ReadFile(overlayFile)
	if err != nil {
		t.Fatal(err)
	}
	baseZone := load(t).configMap.Data["RECON_TZ"]
	for _, zone := range []string{"", "Asia/Kolkata"} {
		name := zone
		if name == "" {
			name = "as_documented"
		}
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			dir := filepath.Dir(overlayFile)
			if zone != "" {
				// The same overlay with another zone, in the same place
				// relative to k8s/.
				text := regexp.MustCompile(`RECON_TZ: "[^"]*"`).ReplaceAllString(string(raw), `RECON_TZ: "`+zone+`"`)
				if n := strings.Count(text, zone); n != 1 {
					t.Fatalf("the overlay sets RECON_TZ %d times, want once", n)
				}
				dir = overlayDir(t, text)
			}
			out := buildOverlay(t, kubectl, dir)
			var cronJob *batchv1.CronJob
			var configMap *corev1.ConfigMap
			for i, doc := range splitDocuments(out) {
				obj, err := decodeObject(doc)
				if err != nil {
					t.Errorf("document %d of the build: %v", i+1, err)
					continue
				}
				switch o := obj.(type) {
				case *batchv1.CronJob:
					cronJob = o
				case *corev1.ConfigMap:
					configMap = o
				case *corev1.Secret:
					t.Errorf("the build holds the Secret %s: applying it would overwrite the real one", o.Name)
				}
			}
			if cronJob == nil || configMap == nil {
				t.Fatal("the build has no CronJob or no ConfigMap")
			}
			tz := configMap.Data["RECON_TZ"]
			if zone != "" && tz != zone {
				t.Errorf("RECON_TZ %q, want %q", tz, zone)
			}
			if tz == baseZone {
				t.Errorf("RECON_TZ is the base's %q: the build cannot show that the zone follows it", tz)
			}
			if got := deref(cronJob.Spec.TimeZone); got != tz {
				t.Errorf("the CronJob's timeZone is %s, RECON_TZ %s: the schedule would run in another zone than the days", got, tz)
			}
		})
	}
}
