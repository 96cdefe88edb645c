package controllers

import (
	"context"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/apf-operator/apf-operator/internal/native"
)

// logOperatorRoute logs the operator's own route (native.OperatorRouteName) when cur's plan
// changes it: projected onto which level, or why there is none. It has no API object whose
// status could say so.
func logOperatorRoute(ctx context.Context, prev, cur *snapshot) {
	if cur == nil || cur.plan == nil {
		return
	}
	route := cur.plan.OperatorRoute
	if prev != nil && prev.plan != nil && prev.plan.OperatorRoute.Message == route.Message {
		return
	}
	logf.FromContext(ctx).Info("Operator route", "flowSchema", native.OperatorRouteName,
		"projected", route.Projected, "reason", route.Reason, "message", route.Message)
}
