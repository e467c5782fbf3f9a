package controlplane_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tenon-sh/tenon/internal/controlplane"
)

// TestFullControlPlane starts every component, has kube-scheduler bind a Deployment's two pods
// to a kwok Node and kwok run them, then checks Stop leaves no process behind.
func TestFullControlPlane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var logs bytes.Buffer // written under the package's lock; read only after Stop
	began := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Logs:              &logs,
		Scheduler:         true,
		ControllerManager: true,
		Kwok:              true,
		CRDs:              []*apiextensionsv1.CustomResourceDefinition{widgetCRD()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("full control plane ready in %v", time.Since(began).Round(time.Millisecond))
	stopped := false
	defer func() {
		if !stopped {
			if t.Failed() {
				t.Log(cp.LogTails(40))
			}
			_ = cp.Stop()
		}
	}()
	workDir := cp.WorkDir()

	cs := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	createKwokNode(ctx, t, cs, "kwok-node-1")
	createDeployment(ctx, t, cs, "web", 2)
	waitPodsRunning(ctx, t, cs, "web", "kwok-node-1", 2)
	t.Logf("2 pods Running %v after Start was called", time.Since(began).Round(time.Millisecond))

	node, err := cs.CoreV1().Nodes().Get(ctx, "kwok-node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeNotReady {
			t.Errorf("node still has %v", taint)
		}
	}
	createWidget(ctx, t, cp)
	kubectlGetNodes(t, cp)

	pids := controlplane.PIDs(cp)
	if len(pids) != 5 {
		t.Errorf("want 5 component processes, got %v", pids)
	}
	checkDoneReportsDeath(t, cp, pids)
	stopBegan := time.Now()
	if err := cp.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	t.Logf("stopped in %v", time.Since(stopBegan).Round(time.Millisecond))
	if err := cp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	for pid, name := range pids {
		if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process group of %s (%d) still exists after Stop (kill -0: %v)", name, pid, err)
		}
	}
	if kids := childProcesses(t); len(kids) > 0 {
		t.Errorf("child processes left after Stop: %v", kids)
	}
	if _, err := os.Stat(workDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary work dir %s not removed: %v", workDir, err)
	}
	for _, name := range []string{controlplane.Etcd, controlplane.APIServer, controlplane.Scheduler, controlplane.ControllerManager, controlplane.Kwok} {
		if !strings.Contains(logs.String(), "\n["+name+"] ") {
			t.Errorf("Options.Logs got no line from %s", name)
		}
	}
}

func createKwokNode(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{controlplane.KwokNodeAnnotation: controlplane.KwokNodeAnnotationValue},
			Labels:      map[string]string{corev1.LabelHostname: name, "type": "kwok"},
		},
		Status: corev1.NodeStatus{Allocatable: res, Capacity: res},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createDeployment(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "app",
					Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("500m"),
						corev1.ResourceMemory: resource.MustParse("512Mi"),
					}},
				}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitPodsRunning(ctx context.Context, t *testing.T, cs kubernetes.Interface, app, node string, want int) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 45*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		running := 0
		var states []string
		for _, p := range pods.Items {
			states = append(states, p.Name+"="+string(p.Status.Phase)+"@"+p.Spec.NodeName)
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == node {
				running++
			}
		}
		last = strings.Join(states, " ")
		return running == want, nil
	})
	if err != nil {
		t.Fatalf("want %d pods of %s Running on %s: %v (pods: %s)", want, app, node, err, last)
	}
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.test.tenon.sh"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "test.tenon.sh",
			Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:                   "object",
					XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

// createWidget creates an object of the CRD Start installed: it must be served already.
func createWidget(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	dc := dynamic.NewForConfigOrDie(cp.RESTConfig())
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.tenon.sh/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
	}}
	gvr := schema.GroupVersionResource{Group: "test.tenon.sh", Version: "v1", Resource: "widgets"}
	if _, err := dc.Resource(gvr).Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a Widget: %v", err)
	}
}

// kubectlGetNodes checks the kubeconfig works with kubectl.
func kubectlGetNodes(t *testing.T, cp *controlplane.ControlPlane) {
	t.Helper()
	dir, err := controlplane.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig="+cp.KubeconfigPath(), "get", "nodes", "-o", "name").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "node/kwok-node-1" {
		t.Errorf("kubectl get nodes: %v: %s", err, out)
	}
}

// childProcesses lists the live processes whose parent is this test binary.
func childProcesses(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Logf("no /proc (%v): skipping the child-process scan", err)
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	var kids []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "PPid:" && f[1] == self {
				kids = append(kids, e.Name())
			}
		}
	}
	return kids
}

// checkDoneReportsDeath kills kwok behind the control plane's back and expects Done and Err to
// report it.
func checkDoneReportsDeath(t *testing.T, cp *controlplane.ControlPlane, pids map[int]string) {
	t.Helper()
	if err := cp.Err(); err != nil {
		t.Fatalf("Err() = %v before any component died", err)
	}
	for pid, name := range pids {
		if name == controlplane.Kwok {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	select {
	case <-cp.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after kwok was killed")
	}
	if err := cp.Err(); err == nil || !strings.Contains(err.Error(), "kwok exited unexpectedly") {
		t.Errorf("Err() = %v, want kwok exited unexpectedly", err)
	}
}

// TestStartFailureQuotesLogAndCleansUp makes kube-scheduler fail and expects Start's error to
// quote its log and every started process to be gone.
func TestStartFailureQuotesLogAndCleansUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	workDir := t.TempDir()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Scheduler: true,
		WorkDir:   workDir,
		ExtraArgs: map[string][]string{controlplane.Scheduler: {"--no-such-flag=1"}},
	})
	if err == nil {
		_ = cp.Stop()
		t.Fatal("Start succeeded with a bad kube-scheduler flag")
	}
	for _, want := range []string{"kube-scheduler exited before it was ready", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start error does not contain %q:\n%v", want, err)
		}
	}
	if kids := childProcesses(t); len(kids) > 0 {
		t.Errorf("child processes left after a failed Start: %v", kids)
	}
	if _, err := os.Stat(filepath.Join(workDir, "logs", "kube-apiserver.log")); err != nil {
		t.Errorf("a given WorkDir must be kept: %v", err)
	}
}
