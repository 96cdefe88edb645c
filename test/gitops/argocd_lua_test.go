package gitops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// healthScriptPath is the Argo CD health script, relative to the repository root.
var healthScriptPath = filepath.Join("deploy", "argocd", "health.lua")

// argoHealth is what an Argo CD health script returns (argo-cd's health.HealthStatus).
type argoHealth struct {
	Status  string
	Message string
}

func (h argoHealth) String() string { return h.Status + " (" + h.Message + ")" }

// argoHealthStatuses are the statuses Argo CD accepts from a script; any other becomes Unknown.
var argoHealthStatuses = map[string]bool{
	"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true,
}

func readHealthScript() (string, error) {
	b, err := os.ReadFile(filepath.Join(envtestutil.RepoRoot(), healthScriptPath))
	return string(b), err
}

// runArgoHealth runs script on obj the way Argo CD runs a custom health check from argocd-cm
// (argo-cd util/lua): gopher-lua without the standard libraries (useOpenLibs off, the default
// for argocd-cm scripts) except package, base and table, a one-second deadline, the object as
// the global table `obj`, and the script's last value read as a table with status and message.
// Argo CD also opens a reduced os library; the script does not use it.
func runArgoHealth(script string, obj *unstructured.Unstructured) (argoHealth, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return argoHealth{}, fmt.Errorf("opening %s: %w", lib.name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, obj.Object))
	if err := l.DoString(script); err != nil {
		return argoHealth{}, err
	}
	result, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return argoHealth{}, fmt.Errorf("the script returned %s, Argo CD expects a table", l.Get(-1).Type())
	}
	h := argoHealth{Status: luaString(result.RawGetString("status")), Message: luaString(result.RawGetString("message"))}
	if !argoHealthStatuses[h.Status] {
		return h, fmt.Errorf("the script returned status %q, which Argo CD turns into Unknown", h.Status)
	}
	return h, nil
}

func luaString(v lua.LValue) string {
	if s, ok := v.(lua.LString); ok {
		return string(s)
	}
	return ""
}

// luaValue converts an unstructured value into Lua as Argo CD does: maps and slices become
// tables, numbers (float64, int, int32, int64) LNumber, json.Number a string, nil and anything
// else nil.
func luaValue(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(luaValue(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for key, item := range v {
			t.RawSetH(lua.LString(key), luaValue(l, item))
		}
		return t
	}
	return lua.LNil
}
