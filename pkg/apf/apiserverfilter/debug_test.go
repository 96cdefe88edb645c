package apiserverfilter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"
)

// operatorsOnly allows user "operator" to get the debug paths, and nobody anything else.
var operatorsOnly = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "operator" && a.GetVerb() == "get" && !a.IsResourceRequest() &&
		strings.HasPrefix(a.GetPath(), apiserverfilter.DebugPathPrefix) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "only operators may debug", nil
})

// debugServer is the debug endpoints of tinyFilter behind the test's authentication.
func debugServer(t *testing.T) (http.Handler, *apf.Filter) {
	f := tinyFilter(t)
	mux := http.NewServeMux()
	apiserverfilter.InstallDebugHandlers(mux, f, operatorsOnly)
	return serverChain(t, mux), f
}

// TestDebugEndpointsNeedAuthorization: every endpoint answers the authorized user and is 403
// for another user and for an anonymous request.
func TestDebugEndpointsNeedAuthorization(t *testing.T) {
	h, _ := debugServer(t)
	for _, name := range []string{apiserverfilter.DebugExplain + "?path=/healthz", apiserverfilter.DebugPriorityLevels,
		apiserverfilter.DebugQueues, apiserverfilter.DebugState} {
		for _, who := range []struct {
			user string
			code int
		}{{"operator", http.StatusOK}, {"u", http.StatusForbidden}, {"", http.StatusForbidden}} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, get(apiserverfilter.DebugPathPrefix+name, who.user))
			if rec.Code != who.code {
				t.Errorf("%s by %q: %d; want %d (body %s)", name, who.user, rec.Code, who.code, rec.Body)
			}
		}
	}
}

// TestDebugExplain: the explanation names the schema, level, distinguisher, width and the
// queue hand of the hypothetical request, and a missing path is a 400 naming the parameter.
func TestDebugExplain(t *testing.T) {
	h, _ := debugServer(t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get(apiserverfilter.DebugPathPrefix+"explain?user=u&group=g1&group=g2&method=POST&"+
		"path=/api/v1/namespaces/a/pods", "operator"))
	var got apf.Explanation
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("explain: %d %s: %v", rec.Code, rec.Body, err)
	}
	want := apf.Explanation{Classification: apf.Classification{FlowSchema: "users", RequestPriority: "only", Width: 2},
		QueuesPerWidth: 1, Hand: []int{0}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("explain a create of pods by u: %+v; want %+v", got, want)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, get(apiserverfilter.DebugPathPrefix+"explain?user=u", "operator"))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "query parameter path") {
		t.Fatalf("explain without a path: %d %q; want 400 naming the path parameter", rec.Code, rec.Body)
	}
}

// TestDebugDumps: the dumps show the level with its limit and a queue holding an executing and
// a waiting request.
func TestDebugDumps(t *testing.T) {
	h, f := debugServer(t)
	g := newGate()
	release := fill(t, f, serverChain(t, apiserverfilter.WithPriorityAndFairness(g, f, longRunning)), g)
	defer release()
	levels := httptest.NewRecorder()
	h.ServeHTTP(levels, get(apiserverfilter.DebugPathPrefix+apiserverfilter.DebugPriorityLevels, "operator"))
	queues := httptest.NewRecorder()
	h.ServeHTTP(queues, get(apiserverfilter.DebugPathPrefix+apiserverfilter.DebugQueues, "operator"))
	checkRow(t, levels.Body.String(), "only", map[string]string{"ExecutingWidth": "1", "WaitingRequests": "1", "ActiveQueues": "1"})
	checkRow(t, queues.Body.String(), "only", map[string]string{"Width": "1", "Index": "0", "WaitingRequests": "1",
		"ExecutingRequests": "1", "Draining": "false"})
}

// checkRow finds the line of dump whose first column is name and checks the given columns.
func checkRow(t *testing.T, dump, name string, want map[string]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(dump), "\n")
	header := splitColumns(lines[0])
	for _, line := range lines[1:] {
		cols := splitColumns(line)
		if cols[0] != name {
			continue
		}
		for i, h := range header {
			if w, ok := want[h]; ok && (i >= len(cols) || cols[i] != w) {
				t.Errorf("column %s of %s: %v; want %s\n%s", h, name, cols, w, dump)
			}
		}
		return
	}
	t.Errorf("no line for %s in:\n%s", name, dump)
}

func splitColumns(line string) []string {
	cols := strings.Split(line, ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	return cols
}
