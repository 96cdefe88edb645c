package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// hardenedValues turn on every caller check of the chart and the events webhook.
var hardenedValues = []string{"eventRateLimit.enabled=true", "webhook.networkPolicy.enabled=true",
	"webhook.networkPolicy.from[0].ipBlock.cidr=10.0.0.0/28", "webhook.clientCA.configMapName=apf-webhook-client-ca"}

// checkChartWebhooks: by default the chart registers three webhooks and not the one on event
// creation; with hardenedValues it registers the fourth (timeoutSeconds 1, kube-system
// excluded), the NetworkPolicy admits the webhook port from the listed peer only, and the
// operator runs with the client CA; kube-apiserver accepts every object (server-side dry run).
func checkChartWebhooks(t *testing.T, ctx context.Context, defaults []*unstructured.Unstructured) {
	t.Helper()
	if names := webhookNames(t, defaults); len(names) != 3 || slices.Contains(names, "vevents.flowcontrol.apf-operator.io") {
		t.Errorf("the default chart registers webhooks %v; want the three of RequestPriority, FlowSchema and EventRateLimit", names)
	}
	if args := managerArgs(t, defaults); !slices.Contains(args, "--enable-event-rate-limit=false") {
		t.Errorf("the default chart runs the manager with %v; want --enable-event-rate-limit=false", args)
	}
	hardened := renderChart(t, hardenedValues...)
	if names := webhookNames(t, hardened); len(names) != 4 {
		t.Errorf("with eventRateLimit.enabled the chart registers webhooks %v; want four", names)
	}
	for _, o := range hardened {
		switch o.GetKind() {
		case "ValidatingWebhookConfiguration":
			checkEventsWebhook(t, o)
		case "NetworkPolicy":
			ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ingress")
			if len(ports) != 2 {
				t.Errorf("NetworkPolicy ingress %v; want the webhook rule and the metrics/health rule", ports)
			}
		}
		apply(t, ctx, o, true)
	}
	if kinds(hardened)["NetworkPolicy"] != 1 {
		t.Error("webhook.networkPolicy.enabled rendered no NetworkPolicy")
	}
	if args := managerArgs(t, hardened); !slices.Contains(args, "--webhook-client-ca-file=/etc/apf-operator/webhook-client-ca/ca.crt") {
		t.Errorf("with webhook.clientCA the manager runs with %v; want --webhook-client-ca-file", args)
	}
}

func checkEventsWebhook(t *testing.T, cfg *unstructured.Unstructured) {
	t.Helper()
	hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		if m["name"] != "vevents.flowcontrol.apf-operator.io" {
			continue
		}
		exprs, _, _ := unstructured.NestedSlice(m, "namespaceSelector", "matchExpressions")
		if fmt.Sprint(m["timeoutSeconds"]) != "1" || m["failurePolicy"] != "Ignore" || len(exprs) != 1 {
			t.Errorf("events webhook %v; want timeoutSeconds 1, failurePolicy Ignore and kube-system excluded", m)
		}
		return
	}
	t.Error("no events webhook rendered")
}

func webhookNames(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var names []string
	for _, o := range objs {
		if o.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, h := range hooks {
			if m, ok := h.(map[string]any); ok {
				names = append(names, m["name"].(string))
			}
		}
	}
	return names
}

func managerArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		return args
	}
	t.Fatal("no Deployment rendered")
	return nil
}
